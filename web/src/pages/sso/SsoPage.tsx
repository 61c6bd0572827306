// /sso (signed out): where the service sends the browser back from the identity provider (API.md §10).
// `#code=…` is traded once for the login body (POST /auth/sso/exchange): signed in, or the MFA step
// when the provider did not vouch for a second factor. `#error=SSO_FAILED` (and a code that is used
// or expired) is explained, with the way back to sign-in. The fragment is cleared once read.
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, call, ApiError } from '../../api/client';
import type { MfaChallenge } from '../../api/types';
import { useSession } from '../../session/session';
import { Spinner } from '../../ui/states';
import { MfaStep } from '../public/mfa-step';
import { Outcome, PublicPage, useFragment } from '../public/parts';

type Stage = { kind: 'exchanging' } | { kind: 'mfa'; challenge: MfaChallenge } | { kind: 'failed'; reason: 'provider' | 'code' | 'other'; error?: ApiError } | { kind: 'nothing' };

export function SsoPage() {
  const session = useSession();
  const navigate = useNavigate();
  const fragment = useFragment();
  const [code] = useState(() => fragment.get('code'));
  const [outcome, setOutcome] = useState<Stage>(() =>
    code ? { kind: 'exchanging' } : fragment.get('error') ? { kind: 'failed', reason: 'provider' } : { kind: 'nothing' });
  // One exchange per code (it works once), even when effects run twice.
  const started = useRef(false);

  useEffect(() => {
    if (!code || started.current) return;
    started.current = true;
    void (async () => {
      try {
        const body = await call(api.POST('/api/v1/auth/sso/exchange', { body: { code } }));
        // Signed in: the app leaves this page for the page asked for before the trip to the provider.
        const next = await session.adoptLogin(body);
        if ('mfaRequired' in next) setOutcome({ kind: 'mfa', challenge: next });
      } catch (err) {
        const error = err instanceof ApiError ? err : new ApiError(0, 'CLIENT', (err as Error).message);
        setOutcome({ kind: 'failed', reason: error.code === 'SSO_FAILED' ? 'code' : 'other', error });
      }
    })();
  }, [code, session]);

  if (outcome.kind === 'exchanging') {
    return <PublicPage title="Signing you in"><Spinner label="Finishing single sign-on…" /></PublicPage>;
  }
  if (outcome.kind === 'mfa') {
    return (
      <PublicPage title="One more step">
        <p>Your identity provider signed you in. Your account also has multi-factor authentication here:</p>
        <MfaStep mfaToken={outcome.challenge.mfaToken} onStartOver={() => void navigate('/sign-in', { replace: true })} />
      </PublicPage>
    );
  }
  if (outcome.kind === 'nothing') {
    return (
      <PublicPage title="Single sign-on">
        <Outcome tone="bad">There is no sign-in to finish here: this page is where your identity provider sends you back to the console. Start from the sign-in page.</Outcome>
        <p className="public-links"><Link to="/sign-in">Go to sign in</Link></p>
      </PublicPage>
    );
  }
  return (
    <PublicPage title="Single sign-on failed">
      <Outcome tone="bad">
        {outcome.reason === 'provider' && (
          <>
            Your identity provider did not sign you in to this console. Either the sign-in was cancelled or refused at the provider, or your account may not
            sign in here through it (for example an address outside the domains allowed for your organization, or no account here yet).
          </>
        )}
        {outcome.reason === 'code' && <>This sign-in took too long or was already used. Start again from the sign-in page.</>}
        {outcome.reason === 'other' && <>The sign-in could not be finished: {outcome.error?.message}</>}
      </Outcome>
      <p className="hint">Try again from the sign-in page. If it keeps failing, ask your administrator to check the single sign-on settings: nothing was changed in your account.</p>
      <p className="public-links"><Link to="/sign-in">Back to sign in</Link></p>
    </PublicPage>
  );
}
