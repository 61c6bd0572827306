// A button that asks before it acts, in a modal <dialog> (keyboard and screen-reader friendly).
// A destructive question opens with Cancel focused, so Enter or Space alone never destroys; Escape
// cancels (the dialog's own cancel); on closing, the focus returns to the button that opened it, and
// when the confirmed action removed that button (a deleted row), to the outcome it reported (the
// page's notice) or else the page's heading, never to the top of the document.
import { useRef, useState, type ReactNode } from 'react';

export function ConfirmButton({ label, name, question, confirmLabel = label, onConfirm, disabled, danger = true }: {
  label: string;
  /** The opener's accessible name when the label alone does not say which item it acts on. */
  name?: string;
  question: ReactNode;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown> | void;
  disabled?: boolean;
  danger?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  // React sets no autofocus attribute for showModal() to find, so the focus is placed here, after
  // showModal() has run the dialog's own focusing steps (which pick the first button).
  const open = () => {
    const box = dialog.current;
    if (!box) return;
    if (!box.open) box.showModal();
    (danger ? cancel : confirm).current?.focus();
  };
  // Cancel, Escape or the answer: back to the opener (when the action did not remove it).
  const closed = () => {
    const button = opener.current;
    if (button?.isConnected) button.focus();
  };
  return (
    <>
      <button ref={opener} type="button" className={danger ? 'danger' : undefined} aria-label={name} disabled={disabled || busy} onClick={open}>
        {label}
      </button>
      <dialog ref={dialog} aria-label={name ?? label} onClose={closed}>
        <form method="dialog" onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          dialog.current?.close();
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            // After React has rendered the outcome (a frame later).
            requestAnimationFrame(() => requestAnimationFrame(focusOutcomeIfLost));
          }
        }}>
          <p>{question}</p>
          <div className="actions">
            <button ref={confirm} type="submit" className={danger ? 'danger' : 'primary'}>{confirmLabel}</button>
            <button ref={cancel} type="button" onClick={() => dialog.current?.close()}>Cancel</button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** Where the focus goes when the focused control is gone: the latest notice, else the page's heading. */
function focusOutcomeIfLost() {
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  const target = document.querySelector<HTMLElement>('main .notice[role=status], main [role=alert]') ?? document.querySelector<HTMLElement>('main h1');
  if (!target) return;
  if (!target.hasAttribute('tabindex')) target.tabIndex = -1;
  target.focus();
}
