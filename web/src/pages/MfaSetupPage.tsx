// First-time TOTP enrolment: a QR code and the secret, then one code to turn MFA on. Afterwards the
// user signs in again, since only a session opened with a code counts as MFA-verified.
import { useEffect, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import QRCode from 'qrcode';
import { api, call } from '../api/client';
import { useSession, useUser } from '../session/session';
import { Field } from '../ui/forms';
import { ErrorMessage, Spinner } from '../ui/states';
import { useAction, useLoad } from '../ui/use-load';

export function MfaSetupPage() {
  const user = useUser();
  const session = useSession();
  const [code, setCode] = useState('');
  const [localError, setLocalError] = useState<string | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  const setup = useLoad(async () => (user.mfaEnabled ? null : call(api.POST('/api/v1/auth/mfa/setup'))), [user.mfaEnabled]);

  useEffect(() => {
    if (setup.data) void QRCode.toDataURL(setup.data.otpauthUrl, { margin: 1, width: 200 }).then(setQr);
  }, [setup.data]);

  const enable = useAction(async () => {
    await call(api.POST('/api/v1/auth/mfa/enable', { body: { code: code.trim() } }));
    await session.signOut('MFA is on. Sign in again with a code from your app.');
  });

  if (user.mfaEnabled) {
    return (
      <main id="main" className="page">
        <h1>Multi-factor authentication</h1>
        <p>MFA is on for {user.email}. {user.mfaVerified ? 'This session was opened with a code.' : 'Sign in again with a code to use actions that need MFA.'}</p>
        <Link to="/">Back to the console</Link>
      </main>
    );
  }

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setLocalError(null);
    if (!/^\d{6}$/.test(code.trim())) return setLocalError('Enter the 6-digit code your authenticator app shows.');
    void enable.run();
  };

  return (
    <main id="main" className="page">
      <h1>Set up multi-factor authentication</h1>
      <p>Creating keys, changing tenants' settings and other sensitive actions need a session signed in with a code from an authenticator app.</p>
      {setup.error && <ErrorMessage error={setup.error} onRetry={setup.reload} />}
      {!setup.data && !setup.error && <Spinner />}
      {setup.data && (
        <>
          <ol>
            <li>Scan this QR code with your authenticator app, or type the secret into it.</li>
            <li>Enter the 6-digit code it shows.</li>
          </ol>
          {qr ? <img src={qr} width={200} height={200} alt="QR code for your authenticator app" /> : <Spinner label="Drawing the QR code…" />}
          <p>Secret: <code data-testid="mfa-secret">{setup.data.secret}</code></p>
          <form onSubmit={submit} noValidate aria-label="Turn on MFA">
            <Field label="Code from the app">
              <input inputMode="numeric" autoComplete="one-time-code" maxLength={6} value={code} onChange={(e) => setCode(e.target.value)} />
            </Field>
            {localError && <p className="field-error" role="alert">{localError}</p>}
            <ErrorMessage error={enable.error} />
            <div className="actions">
              <button type="submit" className="primary" disabled={enable.pending}>Turn on MFA</button>
              <Link to="/">Later</Link>
            </div>
          </form>
        </>
      )}
    </main>
  );
}
