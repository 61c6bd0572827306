// The base of the key forms (API key create and edit, enrollment key create and rotate): the checks
// made before anything is sent, a submit that shows them beside their fields or else sends, the
// frame with its two buttons, and the fields more than one form has.
import { useState, type ReactNode } from 'react';
import type { ApiError } from '../../api/client';
import type { Organization } from '../../api/directory';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { OrganizationChoice } from './key-organizations';

/** SPEC "Limits": names of API keys and enrollment keys. */
const NAME_MAX = 255;

/** A whole-number field's range as the schema states it, and the value a new key starts with. */
export interface Range { min: number; max: number; default: number }

export type FieldErrors<F extends string> = Partial<Record<F, string | undefined>>;

/** Checks a name the way the schema does: 1-255 characters, not only spaces. */
export function nameError(name: string): string | undefined {
  if (!name.trim()) return 'Enter a name.';
  if (name.length > NAME_MAX) return `At most ${NAME_MAX} characters (now ${name.length}).`;
  return undefined;
}

/** Checks a whole-number field against its range; the value is the field's text. */
export function integerError(text: string, { min, max }: Range): string | undefined {
  if (!/^\d+$/.test(text.trim())) return `Enter a whole number from ${min} to ${max.toLocaleString()}.`;
  const value = Number(text);
  if (value < min || value > max) return `Must be from ${min} to ${max.toLocaleString()}.`;
  return undefined;
}

/** A `datetime-local` value that must lie in the future, as ISO ('' when left empty or wrong). */
export function futureTime(local: string): { iso: string; error?: string } {
  if (!local) return { iso: '' };
  const at = new Date(local);
  if (Number.isNaN(at.getTime())) return { iso: '', error: 'Enter a valid date and time.' };
  if (at.getTime() <= Date.now()) return { iso: '', error: 'Must be in the future.' };
  return { iso: at.toISOString() };
}

/** Now as a `datetime-local` value, for the inputs' `min`. */
function localNow(): string {
  const now = new Date();
  now.setSeconds(0, 0);
  return new Date(now.getTime() - now.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * A key form's state and submit: `submit(found, build)` shows the problems found beside their fields,
 * or sends what `build` makes and hands the answer to `onDone`. `build` returns null when nothing
 * changed, which the form then says instead of sending.
 */
export function useKeyForm<F extends string, B, R>(send: (body: B) => Promise<R>, onDone: (result: R) => void) {
  const [errors, setErrors] = useState<FieldErrors<F>>({});
  const [unchanged, setUnchanged] = useState(false);
  const action = useAction(send);
  return {
    pending: action.pending,
    error: action.error,
    unchanged,
    fieldError: (field: F) => errors[field] ?? action.error?.forField(field),
    async submit(found: FieldErrors<F>, build: () => B | null) {
      setErrors(found);
      setUnchanged(false);
      if (Object.values(found).some(Boolean)) return;
      const body = build();
      if (body === null) return setUnchanged(true);
      const result = await action.run(body);
      if (result) onDone(result);
    },
  };
}

/** The organization, name and expiry every new key has. */
export function useNewKeyFields(initialOrgId: string) {
  const [orgId, setOrgId] = useState(initialOrgId);
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  return {
    orgId, setOrgId, name, setName, expires, setExpires,
    /** Checked at submit, when "in the future" means now. */
    errors: () => ({ orgId: orgId ? undefined : 'Choose an organization.', name: nameError(name), expiresAt: futureTime(expires).error }),
    /** Without an expiry the server gives its default. */
    body: () => {
      const { iso } = futureTime(expires);
      return { orgId, name: name.trim(), ...(iso ? { expiresAt: iso } : {}) };
    },
  };
}

export function KeyForm({ form, titleId, title, inRow = false, submitLabels: [label, pendingLabel], onSubmit, onCancel, children }: {
  form: { pending: boolean; error: ApiError | null; unchanged: boolean };
  titleId: string;
  title: ReactNode;
  /** Opened under a row of the list (edit, rotate) instead of above it. */
  inRow?: boolean;
  /** The submit button's label, and its label while the request runs. */
  submitLabels: [string, string];
  onSubmit: () => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  const Heading = inRow ? 'h3' : 'h2';
  return (
    <form className={inRow ? undefined : 'panel'} onSubmit={(e) => { e.preventDefault(); onSubmit(); }} noValidate aria-labelledby={titleId}>
      <Heading id={titleId}>{title}</Heading>
      {children}
      {form.unchanged && <p className="hint" role="status">Nothing changed: there is nothing to save.</p>}
      <ErrorMessage error={form.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={form.pending}>{form.pending ? pendingLabel : label}</button>
        <button type="button" onClick={onCancel} disabled={form.pending}>Cancel</button>
      </div>
    </form>
  );
}

/**
 * The form of a new key: organization, `beforeName` (an enrollment key's site), name, `children`
 * (what the kind of key adds) and expiry.
 */
export function NewKeyForm({ form, fields, orgs, title, titleId, onOrganization = fields.setOrgId, beforeName, nameHint, expiryHint, onSubmit, onCancel, children }: {
  form: { pending: boolean; error: ApiError | null; unchanged: boolean; fieldError: (field: 'orgId' | 'name' | 'expiresAt') => string | undefined };
  fields: ReturnType<typeof useNewKeyFields>;
  orgs: Organization[];
  title: string;
  titleId: string;
  onOrganization?: (orgId: string) => void;
  beforeName?: ReactNode;
  nameHint: string;
  expiryHint: string;
  onSubmit: () => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  return (
    <KeyForm form={form} titleId={titleId} title={title} submitLabels={['Create key', 'Creating…']} onSubmit={onSubmit} onCancel={onCancel}>
      <OrganizationChoice orgs={orgs} value={fields.orgId} onChange={onOrganization} error={form.fieldError('orgId')} />
      {beforeName}
      <NameField value={fields.name} onChange={fields.setName} error={form.fieldError('name')} hint={nameHint} />
      {children}
      <ExpiryField value={fields.expires} onChange={fields.setExpires} error={form.fieldError('expiresAt')} hint={expiryHint} />
    </KeyForm>
  );
}

interface FieldProps { value: string; onChange: (value: string) => void; error: string | undefined; hint?: string }

export function NameField({ value, onChange, error, hint }: FieldProps) {
  return (
    <Field label="Name" error={error} hint={hint}>
      <input value={value} onChange={(e) => onChange(e.target.value)} required />
    </Field>
  );
}

export function ExpiryField({ label = 'Expires (optional)', value, onChange, error, hint }: FieldProps & { label?: string }) {
  return (
    <Field label={label} error={error} hint={hint}>
      <input type="datetime-local" min={localNow()} value={value} onChange={(e) => onChange(e.target.value)} />
    </Field>
  );
}

/** A whole number within `range` (rate limit, maximum uses). */
export function CountField({ label, range, value, onChange, error, hint }: FieldProps & { label: string; range: Range }) {
  return (
    <Field label={label} error={error} hint={hint}>
      <input type="number" inputMode="numeric" min={range.min} max={range.max} step={1} value={value} onChange={(e) => onChange(e.target.value)} />
    </Field>
  );
}
