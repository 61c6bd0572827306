// Who may create, change and remove keys (SPEC "Authentication" 1, 7), and the controls that say
// why they are disabled for everyone else.
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { Organization } from '../../api/directory';
import { useCan, useUser } from '../../session/session';

const WRITE_REASON_ID = 'keys-write-reason';

export interface WriteGate { allowed: boolean; reason: ReactNode }

export function useWriteGate(): WriteGate {
  const user = useUser();
  const can = useCan();
  if (!can('organizations:write')) {
    return { allowed: false, reason: `Your role (${user.role}) may look at keys but not change them: that needs the organizations:write permission.` };
  }
  if (!user.mfaEnabled) {
    return { allowed: false, reason: <>Creating, changing and removing keys needs multi-factor authentication, which is off for your account. <Link to="/account/mfa">Set up MFA</Link>, then sign in again with a code.</> };
  }
  if (!user.mfaVerified) {
    return { allowed: false, reason: 'Creating, changing and removing keys needs a session opened with an MFA code. Sign out and sign in again with a code from your authenticator app.' };
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

/** The button that opens a create form: gated on the write permission, and useless without an organization to create for. */
export function NewKeyButton({ label, gate, orgs, onClick }: {
  label: string;
  gate: WriteGate;
  orgs: Organization[] | undefined;
  onClick: () => void;
}) {
  return (
    <div className="actions keys-new">
      <Gated allowed={gate.allowed} label={label}>
        <button type="button" className="primary" disabled={!orgs || orgs.length === 0} onClick={onClick}>{label}</button>
      </Gated>
      {orgs?.length === 0 && <span className="hint">You reach no organization, so there is none to create a key for.</span>}
    </div>
  );
}
