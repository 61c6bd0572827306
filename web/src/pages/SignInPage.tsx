// Sign-in, e-mail first: the address decides the way in (POST /auth/sso/discover). An address of a
// tenant with single sign-on continues at its identity provider (or, unless the tenant enforces it,
// with the password); any other address gets the password field. Then the TOTP code when the user
// has MFA enabled (or, for a lost phone, one of the user's recovery codes).
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation } from 'react-router';
import { ApiError } from '../api/client';
import { useSession } from '../session/session';
import { Field } from '../ui/forms';
import { ErrorMessage } from '../ui/states';
import { useAction } from '../ui/use-load';
import { MfaStep } from './public/mfa-step';
import { addressKey, rememberReturnTo, useSsoDiscovery } from './sso/sso-sign-in';
import './public/public.css';

type Step = 'email' | 'password' | 'sso';

export function SignInPage({ notice }: { notice: string | null }) {
  const session = useSession();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from ?? null;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  /** The address whose user chose the password over single sign-on. */
  const [passwordFor, setPasswordFor] = useState<string | null>(null);
  /** The address whose password sign-in was refused: its tenant enforces single sign-on. */
  const [ssoRequiredFor, setSsoRequiredFor] = useState<string | null>(null);
  const [localError, setLocalError] = useState<string | null>(null);
  const [leaving, setLeaving] = useState(false);
  const discovery = useSsoDiscovery(email);
  const emailField = useRef<HTMLInputElement>(null);
  const passwordField = useRef<HTMLInputElement>(null);
  const mfaPlace = useRef<HTMLElement>(null);
  /** Whether the MFA step was shown: Start over then puts the focus back on the e-mail field. */
  const hadMfaStep = useRef(false);
  const ssoButton = useRef<HTMLButtonElement>(null);
  /** Set by an explicit step (Continue, a switch): the next step's control takes the focus. */
  const focusNext = useRef(false);

  const found = discovery.found;
  const step: Step = !email.trim() || !found ? 'email' : found.route.kind === 'sso' && passwordFor !== found.email ? 'sso' : 'password';
  const ssoRequired = found !== null && ssoRequiredFor === found.email;

  useEffect(() => {
    if (!focusNext.current || step === 'email') return;
    focusNext.current = false;
    (step === 'sso' ? ssoButton : passwordField).current?.focus();
  }, [step, found]);

  // Each step's first field takes the focus: the code field right after the password step (typed
  // digits must not be lost), the e-mail field again after Start over.
  useEffect(() => {
    if (mfaToken) {
      hadMfaStep.current = true;
      mfaPlace.current?.querySelector<HTMLInputElement>('input:not([type=hidden])')?.focus();
    } else if (hadMfaStep.current) {
      hadMfaStep.current = false;
      emailField.current?.focus();
    }
  }, [mfaToken]);

  // Back from the provider with the browser's Back button, the page may come from its cache: ready again.
  useEffect(() => {
    const shown = (e: PageTransitionEvent) => {
      if (e.persisted) setLeaving(false);
    };
    window.addEventListener('pageshow', shown);
    return () => window.removeEventListener('pageshow', shown);
  }, []);

  const signIn = useAction(async () => {
    try {
      // Signed in: the app leaves this page for the page asked for (or the MFA enrolment).
      const outcome = await session.signIn(email.trim(), password);
      if ('mfaToken' in outcome) setMfaToken(outcome.mfaToken);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'SSO_REQUIRED') {
        // The tenant enforces single sign-on: the provider is the only way in.
        setSsoRequiredFor(addressKey(email));
        setPasswordFor(null);
        setPassword('');
        focusNext.current = true;
        await discovery.lookup(email);
        return;
      }
      throw err;
    }
  });

  const continueSso = useAction(async () => {
    const now = await discovery.current(email);
    if (now.route.kind !== 'sso') {
      focusNext.current = true;
      return;
    }
    setLeaving(true);
    rememberReturnTo(from);
    window.location.assign(now.route.authorizationUrl);
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setLocalError(null);
    if (!email.trim()) return setLocalError('Enter your e-mail address.');
    if (step === 'email') {
      focusNext.current = true;
      return void discovery.lookup(email);
    }
    if (step === 'sso') return void continueSso.run();
    if (!password) return setLocalError('Enter your e-mail address and password.');
    discovery.clearError();
    void signIn.run();
  };

  const usePassword = () => {
    setPasswordFor(found?.email ?? null);
    focusNext.current = true;
  };

  if (mfaToken) {
    return (
      <main className="sign-in" id="main" ref={mfaPlace}>
        <h1>Device Management Console</h1>
        <MfaStep mfaToken={mfaToken} onStartOver={() => setMfaToken(null)} />
      </main>
    );
  }

  return (
    <main className="sign-in" id="main">
      <h1>Device Management Console</h1>
      {notice && <p className="notice" role="status">{notice}</p>}
      <form onSubmit={submit} noValidate aria-label="Sign in">
        <Field label="E-mail">
          <input ref={emailField} type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus />
        </Field>
        {step === 'password' && (
          <Field label="Password">
            <input ref={passwordField} type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
          </Field>
        )}
        {step === 'sso' && (
          <p className={ssoRequired ? 'warning' : 'hint'}>
            {ssoRequired
              ? 'Your organization requires single sign-on: this account cannot sign in with a password. Continue at your identity provider.'
              : 'This address signs in through your organization’s identity provider.'}
          </p>
        )}
        <p className="public-sr-only" aria-live="polite">
          {discovery.pending ? '' : step === 'password' ? 'Enter your password.' : step === 'sso' ? 'This address signs in with single sign-on.' : ''}
        </p>
        {localError && <p className="field-error" role="alert">{localError}</p>}
        <ErrorMessage error={discovery.error && explainDiscovery(discovery.error)} />
        <ErrorMessage error={step === 'sso' ? continueSso.error : explain(signIn.error)} />
        <div className="actions">
          {step === 'email' && (
            <button type="submit" className="primary" disabled={discovery.pending}>{discovery.pending ? 'Checking…' : 'Continue'}</button>
          )}
          {step === 'password' && (
            <button type="submit" className="primary" disabled={signIn.pending}>{signIn.pending ? 'Signing in…' : 'Sign in'}</button>
          )}
          {step === 'sso' && (
            <button ref={ssoButton} type="submit" className="primary" disabled={continueSso.pending || leaving}>
              {leaving ? 'Opening your identity provider…' : 'Continue with single sign-on'}
            </button>
          )}
        </div>
        {step === 'sso' && !ssoRequired && (
          <p><button type="button" className="link" onClick={usePassword}>Use your password instead</button></p>
        )}
        <p className="public-links">
          <Link to="/forgot-password" state={{ email: email.trim() }}>Forgot your password?</Link>
        </p>
      </form>
    </main>
  );
}

/** The server's words are right, but say plainly what to do about the common refusals. */
function explain(error: ApiError | null): ApiError | null {
  if (!error) return null;
  if (error.code === 'UNAUTHENTICATED') return new ApiError(error.status, error.code, 'Wrong e-mail address or password.');
  return error;
}

function explainDiscovery(error: ApiError): ApiError {
  if (error.code === 'SSO_FAILED') {
    return new ApiError(error.status, error.code, 'Single sign-on for this address is not available right now: its identity provider cannot be reached. Try again later, or sign in with your password if your account has one.');
  }
  return new ApiError(error.status, error.code, `Could not check whether this address uses single sign-on (${error.message}) You can still sign in with your password.`);
}
