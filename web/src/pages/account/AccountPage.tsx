// My account, for everyone signed in: who they are, where they are signed in (sessions, each with
// its revoke), multi-factor authentication and its recovery codes, and their password.
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { useUser } from '../../session/session';
import { useListQuery } from '../../ui/list-query';
import { useLoad } from '../../ui/use-load';
import { PageHeading } from '../users/parts';
import { PasswordForm } from './password-form';
import { RecoveryCodes } from './recovery-codes';
import { Sessions } from './sessions';

const SESSIONS_PER_PAGE = 100;

export function AccountPage() {
  const user = useUser();
  const query = useListQuery([], 'sessionsPage');
  const sessions = useLoad(() => call(api.GET('/api/v1/auth/sessions', { params: { query: { page: query.page, limit: SESSIONS_PER_PAGE } } })), [query.key]);

  return (
    <main id="main" className="page users">
      <PageHeading>My account</PageHeading>
      <dl className="props users-props">
        <dt>Name</dt><dd>{user.name}</dd>
        <dt>E-mail</dt><dd>{user.email}</dd>
        <dt>Role</dt><dd>{user.role} ({user.scope} scope)</dd>
      </dl>

      <Sessions list={sessions} onPage={query.setPage} />

      <section className="users-section" aria-labelledby="mfa-title">
        <h2 id="mfa-title">Multi-factor authentication</h2>
        {user.mfaEnabled ? (
          <p>
            MFA is <strong>on</strong>: signing in asks for a code from your authenticator app (or a recovery code).{' '}
            {user.mfaVerified ? 'This session was opened with a code.' : 'This session was opened without a code, so actions that need MFA are refused until you sign in again with one.'}
          </p>
        ) : (
          <p>
            MFA is <strong>off</strong>: your password alone signs you in, and actions that change keys, users and settings are refused.{' '}
            <Link to="/account/mfa">Set up MFA</Link>
          </p>
        )}
      </section>

      <RecoveryCodes />

      <PasswordForm onChanged={sessions.reload} />
    </main>
  );
}
