// The second step of a sign-in for a user with MFA: the 6-digit code from the authenticator app or,
// for a lost phone, one of the user's recovery codes. Used after a password and after single sign-on
// (when the provider did not vouch for a second factor).
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import { useSession } from '../../session/session';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';

export function MfaStep({ mfaToken, onStartOver }: { mfaToken: string; onStartOver: () => void }) {
  const session = useSession();
  const [code, setCode] = useState('');
  const [useRecovery, setUseRecovery] = useState(false);
  const [recoveryCode, setRecoveryCode] = useState('');
  const recoveryField = useRef<HTMLInputElement>(null);
  const codeField = useRef<HTMLInputElement>(null);
  const switched = useRef(false);
  const [localError, setLocalError] = useState<string | null>(null);
  // Signed in: the app leaves this page for the page asked for (or the MFA enrolment).
  const verify = useAction(() => session.verifyMfa(mfaToken, useRecovery ? { recoveryCode: recoveryCode.trim() } : code.trim()));
  // After the switch between the two kinds of code, the field that appeared takes the focus.
  useEffect(() => {
    if (!switched.current) return;
    (useRecovery ? recoveryField : codeField).current?.focus();
  }, [useRecovery]);
  const switchKind = () => {
    switched.current = true;
    setLocalError(null);
    verify.clearError();
    setUseRecovery(!useRecovery);
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setLocalError(null);
    if (useRecovery && !recoveryCode.trim()) return setLocalError('Enter one of your recovery codes.');
    if (!useRecovery && !/^\d{6}$/.test(code.trim())) return setLocalError('The code is the 6 digits your authenticator app shows.');
    void verify.run();
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Multi-factor authentication">
      {useRecovery ? (
        <>
          <p>Enter one of the recovery codes you stored when you created them. Each works once.</p>
          <Field label="Recovery code" hint="Like abcd-efgh-jkmn-pqrs; dashes and capitals do not matter.">
            <input ref={recoveryField} autoComplete="off" autoCapitalize="none" spellCheck={false} maxLength={64} value={recoveryCode} onChange={(e) => setRecoveryCode(e.target.value)} required />
          </Field>
        </>
      ) : (
        <>
          <p>Enter the 6-digit code from your authenticator app.</p>
          <Field label="Authentication code">
            <input ref={codeField} inputMode="numeric" autoComplete="one-time-code" maxLength={6} value={code} onChange={(e) => setCode(e.target.value)} required autoFocus />
          </Field>
        </>
      )}
      {localError && <p className="field-error" role="alert">{localError}</p>}
      <ErrorMessage error={explainMfaError(verify.error, useRecovery)} />
      <div className="actions">
        <button type="submit" className="primary" disabled={verify.pending}>{verify.pending ? 'Checking…' : 'Verify'}</button>
        <button type="button" onClick={onStartOver}>Start over</button>
      </div>
      <p>
        <button type="button" className="link" onClick={switchKind}>
          {useRecovery ? 'Use a code from your authenticator app' : 'Use a recovery code'}
        </button>
      </p>
    </form>
  );
}

/** The server's words are right, but say plainly what to do about the common refusals. */
function explainMfaError(error: ApiError | null, recovery: boolean): ApiError | null {
  if (!error) return null;
  const say = (message: string) => new ApiError(error.status, error.code, message);
  if (error.code === 'UNAUTHENTICATED') return say('This sign-in has expired. Start over.');
  if (error.code === 'MFA_INVALID') {
    return say(recovery ? 'That recovery code is wrong or already used. Try another of your codes.' : 'That code is wrong or already used. Wait for the next code and try again.');
  }
  return error;
}
