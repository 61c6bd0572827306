// /forgot-password (signed out): the address to mail a reset link to (POST /auth/password/forgot).
// The answer is the same whether or not an account has the address (API.md §10: no enumeration),
// and the page says exactly that.
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'react-router';
import { api, call } from '../../api/client';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { Outcome, PublicPage } from './parts';

export function ForgotPasswordPage() {
  const location = useLocation();
  const [email, setEmail] = useState(() => (location.state as { email?: string } | null)?.email ?? '');
  const [fieldError, setFieldError] = useState<string | undefined>();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const send = useAction(async (address: string) => {
    await call(api.POST('/api/v1/auth/password/forgot', { body: { email: address } }));
    setSentTo(address);
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const address = email.trim();
    if (!/^[^\s@]+@[^\s@]+$/.test(address) || address.length > 255) return setFieldError('Enter the e-mail address you sign in with.');
    setFieldError(undefined);
    void send.run(address);
  };

  return (
    <PublicPage title="Forgot your password?">
      {sentTo ? (
        <>
          <Outcome key={sentTo}>
            If an account exists for <strong>{sentTo}</strong>, we sent a link to it. The link works once, for 30 minutes.
          </Outcome>
          <p className="hint">No message? Look in the spam folder, check the address, or ask your administrator. Accounts that sign in with single sign-on change their password at their identity provider.</p>
          <p className="public-links">
            <button type="button" className="link" onClick={() => { setSentTo(null); send.clearError(); }}>Send another link</button>
            <Link to="/sign-in">Back to sign in</Link>
          </p>
        </>
      ) : (
        <form onSubmit={submit} noValidate aria-label="Send a password reset link">
          <p>Enter the address you sign in with. We will mail you a link to choose a new password.</p>
          <Field label="E-mail" error={fieldError ?? send.error?.forField('email')}>
            <input type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus />
          </Field>
          <ErrorMessage error={send.error?.forField('email') ? null : send.error} />
          <div className="actions">
            <button type="submit" className="primary" disabled={send.pending}>{send.pending ? 'Sending…' : 'Send reset link'}</button>
          </div>
          <p className="public-links"><Link to="/sign-in">Back to sign in</Link></p>
        </form>
      )}
    </PublicPage>
  );
}
