// /accept-invitation#token=… (the link of an invitation mail), signed out or signed in as someone
// else: the invitee's name (optional) and password → POST /auth/invitations/accept, which answers
// with the login body: the new account is signed in at once (replacing this tab's session, if any).
import { useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { useSession } from '../../session/session';
import { Field } from '../../ui/forms';
import { ErrorMessage, Spinner } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { NewPasswordFields } from './new-password-fields';
import { checkNewPassword, Outcome, PublicPage, useFragment } from './parts';

export function AcceptInvitationPage() {
  const session = useSession();
  const navigate = useNavigate();
  const token = useFragment().get('token');
  const form = useRef<HTMLFormElement>(null);
  // Who this tab was signed in as when the link was opened (the invitation is for someone else).
  const [signedInAs] = useState(() => (session.state.status === 'signed-in' ? session.state.user : null));
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [errors, setErrors] = useState<{ name?: string; password?: string; again?: string }>({});
  const [accepted, setAccepted] = useState(false);
  const accept = useAction(async () => {
    const body = await call(api.POST('/api/v1/auth/invitations/accept', { body: { token: token!, password, ...(name.trim() ? { name: name.trim() } : {}) } }));
    setAccepted(true);
    await session.adoptLogin(body);
    // A new account has no MFA yet: its enrolment first, as after any sign-in without it.
    void navigate(body.user.mfaEnabled ? '/' : '/account/mfa', { replace: true });
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: typeof errors = { ...checkNewPassword(password, again) };
    if (name.trim().length > 255) found.name = `The name can have at most 255 characters (now ${name.trim().length}).`;
    setErrors(found);
    if (Object.keys(found).length > 0) {
      requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    void accept.run();
  };

  if (accepted && !accept.error) {
    return <PublicPage title="Invitation accepted"><Spinner label="Your account is ready. Opening the console…" /></PublicPage>;
  }
  const back = signedInAs ? <Link to="/">Back to the console</Link> : <Link to="/sign-in">Go to sign in</Link>;
  if (!token) {
    return (
      <PublicPage title="Accept an invitation">
        <Outcome tone="bad">This page opens from the link in an invitation e-mail, and this address has no invitation token. Open the link from the message again.</Outcome>
        <p className="public-links">{back}</p>
      </PublicPage>
    );
  }
  if (accept.error?.code === 'TOKEN_INVALID') {
    return (
      <PublicPage title="Accept an invitation">
        <Outcome tone="bad">This invitation link is not valid any more (used, withdrawn or expired): ask for a new one.</Outcome>
        <p className="hint">The person who invited you can send a new invitation from the console’s Users page.</p>
        <p className="public-links">{back}</p>
      </PublicPage>
    );
  }
  const conflict = accept.error?.code === 'CONFLICT';
  const fieldError = (field: 'name' | 'password') => accept.error?.forField(field);
  return (
    <PublicPage title="Accept your invitation">
      {signedInAs && (
        <p className="warning" role="note">
          You are signed in as <strong>{signedInAs.name}</strong> ({signedInAs.email}). This invitation creates a different account: accepting it signs you out of {signedInAs.email} in this tab.
        </p>
      )}
      <form ref={form} onSubmit={submit} noValidate aria-label="Accept invitation">
        <p>Choose the password of your new account. You sign in with the e-mail address the invitation was sent to.</p>
        <Field label="Your name" error={errors.name ?? fieldError('name')} hint="Optional: leave it empty to keep the name given in the invitation.">
          <input autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <NewPasswordFields
          password={password}
          again={again}
          onPassword={setPassword}
          onAgain={setAgain}
          errors={{ password: errors.password ?? fieldError('password'), again: errors.again }}
        />
        {conflict ? (
          <p className="state state-error" role="alert">
            An account with the address of this invitation exists already. <Link to="/sign-in">Sign in</Link> with it, or use “Forgot your password?” there.
          </p>
        ) : (
          <ErrorMessage error={fieldError('password') || fieldError('name') ? null : accept.error} />
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={accept.pending}>{accept.pending ? 'Creating your account…' : 'Accept invitation and sign in'}</button>
        </div>
        <p className="public-links">{back}</p>
      </form>
    </PublicPage>
  );
}
