// /reset-password#token=… (the link of a reset mail): a new password twice → POST /auth/password/reset.
// Success ends every session of the account (API.md §10), so the page sends the reader to sign in.
// A used, expired or replaced link (TOKEN_INVALID) is explained with the way to a new one.
import { useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { NewPasswordFields } from './new-password-fields';
import { checkNewPassword, Outcome, PublicPage, useFragment } from './parts';

export function ResetPasswordPage() {
  const token = useFragment().get('token');
  const form = useRef<HTMLFormElement>(null);
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [errors, setErrors] = useState<{ password?: string; again?: string }>({});
  const [done, setDone] = useState(false);
  const reset = useAction(async () => {
    await call(api.POST('/api/v1/auth/password/reset', { body: { token: token!, password } }));
    setPassword('');
    setAgain('');
    setDone(true);
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found = checkNewPassword(password, again);
    setErrors(found);
    if (Object.keys(found).length > 0) {
      requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    void reset.run();
  };

  if (!token) {
    return (
      <PublicPage title="Choose a new password">
        <Outcome tone="bad">This page opens from the link in a password reset e-mail, and this address has no link token. Open the link from the message again, or ask for a new one.</Outcome>
        <p className="public-links"><Link to="/forgot-password">Ask for a new link</Link><Link to="/sign-in">Back to sign in</Link></p>
      </PublicPage>
    );
  }
  if (done) {
    return (
      <PublicPage title="Password changed">
        <Outcome>Your new password is set. Every session of your account has been signed out: sign in again with the new password.</Outcome>
        <p className="public-links"><Link to="/sign-in">Sign in</Link></p>
      </PublicPage>
    );
  }
  const invalid = reset.error?.code === 'TOKEN_INVALID';
  return (
    <PublicPage title="Choose a new password">
      {invalid ? (
        <>
          <Outcome tone="bad">
            This password reset link is not valid any more: it was used already, it expired (links work for 30 minutes), or a newer link replaced it. Ask for a new link.
          </Outcome>
          <p className="public-links"><Link to="/forgot-password">Ask for a new link</Link><Link to="/sign-in">Back to sign in</Link></p>
        </>
      ) : (
        <form ref={form} onSubmit={submit} noValidate aria-label="Choose a new password">
          <NewPasswordFields
            password={password}
            again={again}
            onPassword={setPassword}
            onAgain={setAgain}
            errors={{ password: errors.password ?? reset.error?.forField('password'), again: errors.again }}
            autoFocus
          />
          <ErrorMessage error={reset.error?.forField('password') ? null : reset.error} />
          <div className="actions">
            <button type="submit" className="primary" disabled={reset.pending}>{reset.pending ? 'Saving…' : 'Set new password'}</button>
          </div>
          <p className="public-links"><Link to="/sign-in">Back to sign in</Link></p>
        </form>
      )}
    </PublicPage>
  );
}
