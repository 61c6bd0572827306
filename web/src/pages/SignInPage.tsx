// Sign-in: e-mail and password, then the TOTP code when the user has MFA enabled.
import { useState, type FormEvent } from 'react';
import { ApiError } from '../api/client';
import { useSession } from '../session/session';
import { Field } from '../ui/forms';
import { ErrorMessage } from '../ui/states';
import { useAction } from '../ui/use-load';

export function SignInPage({ notice }: { notice: string | null }) {
  const session = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [localError, setLocalError] = useState<string | null>(null);

  const signIn = useAction(async () => {
    // Signed in: the app leaves this page for the page asked for (or the MFA enrolment).
    const outcome = await session.signIn(email.trim(), password);
    if ('mfaToken' in outcome) setMfaToken(outcome.mfaToken);
  });
  const verify = useAction(() => session.verifyMfa(mfaToken!, code.trim()));

  const submitPassword = (e: FormEvent) => {
    e.preventDefault();
    setLocalError(null);
    if (!email.trim() || !password) return setLocalError('Enter your e-mail address and password.');
    void signIn.run();
  };
  const submitCode = (e: FormEvent) => {
    e.preventDefault();
    setLocalError(null);
    if (!/^\d{6}$/.test(code.trim())) return setLocalError('The code is the 6 digits your authenticator app shows.');
    void verify.run();
  };

  return (
    <main className="sign-in" id="main">
      <h1>Device Management Console</h1>
      {notice && !mfaToken && <p className="notice" role="status">{notice}</p>}
      {!mfaToken ? (
        <form onSubmit={submitPassword} noValidate aria-label="Sign in">
          <Field label="E-mail">
            <input type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus />
          </Field>
          <Field label="Password">
            <input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
          </Field>
          {localError && <p className="field-error" role="alert">{localError}</p>}
          <ErrorMessage error={explain(signIn.error, 'password')} />
          <button type="submit" className="primary" disabled={signIn.pending}>{signIn.pending ? 'Signing in…' : 'Sign in'}</button>
        </form>
      ) : (
        <form onSubmit={submitCode} noValidate aria-label="Multi-factor authentication">
          <p>Enter the 6-digit code from your authenticator app.</p>
          <Field label="Authentication code">
            <input inputMode="numeric" autoComplete="one-time-code" maxLength={6} value={code} onChange={(e) => setCode(e.target.value)} required autoFocus />
          </Field>
          {localError && <p className="field-error" role="alert">{localError}</p>}
          <ErrorMessage error={explain(verify.error, 'code')} />
          <div className="actions">
            <button type="submit" className="primary" disabled={verify.pending}>{verify.pending ? 'Checking…' : 'Verify'}</button>
            <button type="button" onClick={() => { setMfaToken(null); setCode(''); }}>Start over</button>
          </div>
        </form>
      )}
    </main>
  );
}

/** The server's words are right, but say plainly what to do about the common refusals. */
function explain(error: ApiError | null, step: 'password' | 'code'): ApiError | null {
  const say = (message: string) => new ApiError(error!.status, error!.code, message);
  if (error?.code === 'UNAUTHENTICATED') return say(step === 'password' ? 'Wrong e-mail address or password.' : 'This sign-in has expired. Start over.');
  if (error?.code === 'MFA_INVALID') return say('That code is wrong or already used. Wait for the next code and try again.');
  return error;
}
