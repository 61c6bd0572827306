// A button that asks before it acts, in a modal <dialog> (keyboard and screen-reader friendly).
import { useRef, useState, type ReactNode } from 'react';

export function ConfirmButton({ label, question, confirmLabel = label, onConfirm, disabled, danger = true }: {
  label: string;
  question: ReactNode;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown> | void;
  disabled?: boolean;
  danger?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  return (
    <>
      <button type="button" className={danger ? 'danger' : undefined} disabled={disabled || busy} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-label={label}>
        <form method="dialog" onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          dialog.current?.close();
          try {
            await onConfirm();
          } finally {
            setBusy(false);
          }
        }}>
          <p>{question}</p>
          <div className="actions">
            <button type="submit" className={danger ? 'danger' : 'primary'} autoFocus>{confirmLabel}</button>
            <button type="button" onClick={() => dialog.current?.close()}>Cancel</button>
          </div>
        </form>
      </dialog>
    </>
  );
}
