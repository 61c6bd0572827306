// Small pieces both destination screens use: a notice that takes the focus (so the outcome of an
// action is read out where the user is), the one-time secret, a table that scrolls on its own, and
// the status with its trouble.
import { useEffect, useRef, type ReactNode } from 'react';
import { formatDateTime } from '../../ui/format';
import { SecretReveal } from '../../ui/secret-reveal';
import { StatusBadge } from '../../ui/status-badge';
import { lastAttemptFailed, type Destination } from './destination';

const TONES = { notice: 'notice', warning: 'warning', ok: 'state destinations-ok', bad: 'state state-error' } as const;

/**
 * The outcome of the last action, `lead` in bold before `message`. Focused when the text changes
 * (text, not elements: a re-render must not pull the focus back), so it is read out where the user is.
 */
export function Notice({ lead, message, tone = 'notice' }: { lead?: string; message: string | null; tone?: keyof typeof TONES }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (message) ref.current?.focus();
  }, [lead, message]);
  if (!message) return null;
  return <div ref={ref} tabIndex={-1} className={TONES[tone]} role="status">{lead && <strong>{lead} </strong>}{message}</div>;
}

/** A new signing secret, shown once and focused; after "I have stored it" nothing holds it any more. */
export function OneTimeSecret({ title, secret, warning, onDone }: { title: string; secret: string; warning: string; onDone: () => void }) {
  const region = useRef<HTMLDivElement>(null);
  useEffect(() => region.current?.focus(), [secret]);
  return (
    <div ref={region} tabIndex={-1}>
      <SecretReveal title={title} secret={secret} warning={warning} onDone={onDone} />
    </div>
  );
}

/** A wide table scrolls inside this frame, not the page (narrow screens); keyboard users can scroll it too. */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return <div className="destinations-scroll" role="region" aria-label={label} tabIndex={0}>{children}</div>;
}

/** The page heading, focused when the user arrives from an action on another screen (create, delete). */
export function PageHeading({ children, focus }: { children: ReactNode; focus: boolean }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focus) ref.current?.focus();
  }, [focus]);
  return <h1 ref={ref} tabIndex={-1}>{children}</h1>;
}

/** The status badge, and for a destination in trouble the error and when it last happened. */
export function DestinationStatus({ destination: d }: { destination: Destination }) {
  const failed = d.status !== 'disabled' && lastAttemptFailed(d);
  return (
    <>
      <StatusBadge status={d.status} />
      {d.status === 'failing' && <div className="destinations-problem">Deliveries have failed for over 24 hours and are still retried.</div>}
      {(d.status === 'failing' || failed) && d.lastError && (
        <div className={d.status === 'failing' ? 'destinations-problem' : 'destinations-trouble'}>
          Last error: {d.lastError}{d.lastFailureAt && <> ({formatDateTime(d.lastFailureAt)})</>}
        </div>
      )}
    </>
  );
}
