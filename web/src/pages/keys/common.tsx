// What the API key and enrollment key screens share: the organizations the user reaches, their sites,
// the list's URL state, the rule for who may change keys, and the one-time reveal of a new key.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { loadOrganizations, type Organization } from '../../api/directory';
import { useCan, useUser } from '../../session/session';
import { Field } from '../../ui/forms';
import type { Pagination } from '../../ui/pager';
import { SecretReveal } from '../../ui/secret-reveal';
import { useLoad, type Loaded } from '../../ui/use-load';
import './keys.css';

export const PAGE_SIZE = 25;
/** SPEC "Limits": names of API keys and enrollment keys. */
export const NAME_MAX = 255;

export { loadSitesOf as loadSites, type Organization } from '../../api/directory';

/** Every organization the user reaches (GET /orgs admits all three scopes). */
export function useOrganizations(): Loaded<Organization[]> {
  return useLoad(loadOrganizations, []);
}


/** The API's pagination with the counts it leaves null under skipCount (never asked for here). */
export function pagesOf(p: { page: number; limit: number; total: number | null; totalPages: number | null }): Pagination {
  return { page: p.page, limit: p.limit, total: p.total ?? 0, totalPages: p.totalPages ?? 0 };
}

/** A list's filters and page, kept in the address so a reload or a shared link shows the same list. */
export function useListParams<F extends string>(filters: readonly F[]) {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const values = Object.fromEntries(filters.map((f) => [f, params.get(f) ?? ''])) as Record<F, string>;
  return {
    page,
    values,
    setPage: (next: number) => setParams((p) => { p.set('page', String(next)); return p; }),
    /** Changing a filter goes back to the first page. */
    setFilter: (name: F, value: string) => setParams((p) => {
      if (value) p.set(name, value); else p.delete(name);
      p.delete('page');
      return p;
    }),
  };
}

export const WRITE_REASON_ID = 'keys-write-reason';

/** Whether the user may create, change and remove keys, and if not, why (SPEC "Authentication" 1, 7). */
export function useWriteGate(): { allowed: boolean; reason: ReactNode } {
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
export function WriteGateNote({ gate }: { gate: { allowed: boolean; reason: ReactNode } }) {
  if (gate.allowed) return null;
  return <p className="notice" id={WRITE_REASON_ID} role="note">{gate.reason}</p>;
}

/** A write control: itself when writes are allowed, else a disabled button that points to the reason. */
export function Gated({ allowed, label, children }: { allowed: boolean; label: string; children: ReactNode }) {
  if (allowed) return <>{children}</>;
  return <button type="button" disabled aria-describedby={WRITE_REASON_ID}>{label}</button>;
}

/** The organization filter of a list; not shown to a user who reaches one organization only. */
/** The button that opens a create form: gated on the write permission, and useless without an organization to create for. */
export function NewKeyButton({ label, gate, orgs, onClick }: {
  label: string;
  gate: { allowed: boolean };
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

export function OrganizationFilter({ orgs, value, onChange }: { orgs: Organization[]; value: string; onChange: (orgId: string) => void }) {
  if (orgs.length <= 1 && !value) return null;
  return (
    <Field label="Organization">
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">All organizations</option>
        {orgs.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
      </select>
    </Field>
  );
}

/**
 * The organization a new key belongs to: organization-scope users have theirs, shown but fixed; the
 * others choose among those they reach.
 */
export function OrganizationChoice({ orgs, value, onChange, error }: { orgs: Organization[]; value: string; onChange: (orgId: string) => void; error?: string | undefined }) {
  const user = useUser();
  if (user.scope === 'organization') {
    const own = orgs.find((o) => o.id === user.orgId);
    return (
      <Field label="Organization" error={error} hint="Keys you create belong to your organization.">
        <input value={own?.name ?? user.orgId ?? ''} readOnly />
      </Field>
    );
  }
  return (
    <Field label="Organization" error={error}>
      <select value={value} onChange={(e) => onChange(e.target.value)} required>
        <option value="">Choose an organization…</option>
        {orgs.map((o) => <option key={o.id} value={o.id}>{o.name}{o.status === 'active' ? '' : ` (${o.status})`}</option>)}
      </select>
    </Field>
  );
}

/** The organization a form starts with: the user's own, or the list's filter, or the only one. */
export function initialOrg(user: { scope: string; orgId: string | null }, orgs: Organization[], filter: string): string {
  if (user.scope === 'organization') return user.orgId ?? '';
  if (filter) return filter;
  return orgs.length === 1 ? orgs[0]!.id : '';
}

export function orgName(orgs: Organization[] | undefined, id: string): string {
  return orgs?.find((o) => o.id === id)?.name ?? id;
}

/** Checks a name the way the schema does: 1-255 characters, not only spaces. */
export function nameError(name: string): string | undefined {
  if (!name.trim()) return 'Enter a name.';
  if (name.length > NAME_MAX) return `At most ${NAME_MAX} characters (now ${name.length}).`;
  return undefined;
}

/** Checks an integer field against its range; the value is the field's text. */
export function integerError(text: string, min: number, max: number): string | undefined {
  if (!/^\d+$/.test(text.trim())) return `Enter a whole number from ${min} to ${max.toLocaleString()}.`;
  const value = Number(text);
  if (value < min || value > max) return `Must be from ${min} to ${max.toLocaleString()}.`;
  return undefined;
}

/** A `datetime-local` value that must lie in the future, as ISO; '' when left empty. */
export function futureTime(local: string): { iso: string; error?: undefined } | { error: string } {
  if (!local) return { iso: '' };
  const at = new Date(local);
  if (Number.isNaN(at.getTime())) return { error: 'Enter a valid date and time.' };
  if (at.getTime() <= Date.now()) return { error: 'Must be in the future.' };
  return { iso: at.toISOString() };
}

/** Now as a `datetime-local` value, for the inputs' `min`. */
export function localNow(): string {
  const now = new Date();
  now.setSeconds(0, 0);
  return new Date(now.getTime() - now.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export function StatusBadge({ status }: { status: string }) {
  const tone = status === 'active' ? 'ok' : status === 'exhausted' ? 'warn' : status === 'revoked' ? 'muted' : 'bad';
  return <span className={`badge badge-${tone}`}>{status}</span>;
}

/** A new key, shown once: after "I have stored it" nothing on the page holds it any more. */
export interface Revealed { title: string; secret: string; warning: string; command?: string }

export function KeyReveal({ revealed, onDone }: { revealed: Revealed; onDone: () => void }) {
  const region = useRef<HTMLDivElement>(null);
  useEffect(() => region.current?.focus(), [revealed]);
  return (
    <div ref={region} tabIndex={-1}>
      <SecretReveal title={revealed.title} secret={revealed.secret} warning={revealed.warning} onDone={onDone}>
        {revealed.command && <CopyableCommand label="Start the reference agent with this key" command={revealed.command} />}
      </SecretReveal>
    </div>
  );
}

function CopyableCommand({ label, command }: { label: string; command: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(command);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div>
      <p>{label}:</p>
      <div className="secret">
        <code data-testid="agent-command">{command}</code>
        <button type="button" onClick={() => void copy()}>Copy command</button>
      </div>
      <p className="hint" aria-live="polite">{copied === null ? '' : copied ? 'Command copied to the clipboard.' : 'Copy failed: select the command and copy it by hand.'}</p>
    </div>
  );
}
