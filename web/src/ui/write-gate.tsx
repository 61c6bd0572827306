// Who may change what a screen manages (organizations:write and an MFA-verified session, SPEC
// "Authentication" 1, 7), and the controls that say why they are disabled for everyone else.
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { useCan, useUser } from '../session/session';

const WRITE_REASON_ID = 'write-gate-reason';

export interface WriteGate { allowed: boolean; reason: ReactNode }

/** `noun` names what the screen changes ("keys", "event destinations") in the reason. */
export function useWriteGate(noun: string): WriteGate {
  const user = useUser();
  const can = useCan();
  if (!can('organizations:write')) {
    return { allowed: false, reason: `Your role (${user.role}) may look at ${noun} but not change them: that needs the organizations:write permission.` };
  }
  if (!user.mfaEnabled) {
    return { allowed: false, reason: <>Creating, changing and removing {noun} needs multi-factor authentication, which is off for your account. <Link to="/account/mfa">Set up MFA</Link>, then sign in again with a code.</> };
  }
  if (!user.mfaVerified) {
    return { allowed: false, reason: `Creating, changing and removing ${noun} needs a session opened with an MFA code. Sign out and sign in again with a code from your authenticator app.` };
  }
  return { allowed: true, reason: null };
}

/** The reason the write controls are disabled, which those controls point to. */
export function WriteGateNote({ gate }: { gate: WriteGate }) {
  if (gate.allowed) return null;
  return <p className="notice" id={WRITE_REASON_ID} role="note">{gate.reason}</p>;
}

/** A write control: itself when writes are allowed, else a disabled button that points to the reason. */
export function Gated({ allowed, label, children }: { allowed: boolean; label: string; children: ReactNode }) {
  if (allowed) return <>{children}</>;
  return <button type="button" disabled aria-describedby={WRITE_REASON_ID}>{label}</button>;
}
