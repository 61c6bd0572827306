// The key screens' write gate (the shared one in ui/write-gate.tsx, worded for keys) and the button
// that opens a create form.
import type { Organization } from '../../api/directory';
import { Gated, useWriteGate as useGate, type WriteGate } from '../../ui/write-gate';

export { Gated, WriteGateNote, type WriteGate } from '../../ui/write-gate';

export function useWriteGate(): WriteGate {
  return useGate('keys');
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
