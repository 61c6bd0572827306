// Form parts with labels a screen reader reads and errors tied to their field.
import { useId, type ReactElement, type ReactNode } from 'react';
import { cloneElement } from 'react';

export function Field({ label, error, hint, children }: {
  label: string;
  error?: string | undefined;
  hint?: ReactNode;
  /** One input, select or textarea: it receives the id, aria-invalid and aria-describedby. */
  children: ReactElement<Record<string, unknown>>;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      {hint && <small id={hintId} className="hint">{hint}</small>}
      {error && <small id={errorId} className="field-error" role="alert">{error}</small>}
    </div>
  );
}

/** A checkbox with its label to the right. */
export function Checkbox({ label, checked, onChange, disabled }: { label: ReactNode; checked: boolean; onChange: (checked: boolean) => void; disabled?: boolean }) {
  return (
    <label className="checkbox">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.target.checked)} /> {label}
    </label>
  );
}
