// The forms of the enrollment key screen: create and rotate (both bring back a key shown once).
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import type { paths } from '../../api/schema';
import type { Ok } from '../../api/types';
import { Field } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { ErrorMessage } from '../../ui/states';
import { useAction, useLoad } from '../../ui/use-load';
import { NAME_MAX, OrganizationChoice, futureTime, integerError, loadSites, localNow, nameError, type Organization } from './common';

export type EnrollmentKey = Ok<'/api/v1/enrollment-keys/{id}', 'get'>;
export type NewEnrollmentKey = Ok<'/api/v1/enrollment-keys/', 'post'>;
type CreateBody = paths['/api/v1/enrollment-keys/']['post']['requestBody']['content']['application/json'];
type RotateBody = NonNullable<paths['/api/v1/enrollment-keys/{id}/rotate']['post']['requestBody']['content']['application/json']>;

/** The enrollment key schema's maxUsage: an integer 1-100000, 1 when not given (null, unlimited, on rotate only). */
export const MAX_USAGE = { min: 1, max: 100_000, default: 1 } as const;

type Errors = Partial<Record<'orgId' | 'siteId' | 'name' | 'maxUsage' | 'expiresAt', string | undefined>>;
const hasErrors = (errors: Errors) => Object.values(errors).some(Boolean);

export function EnrollmentKeyCreateForm({ orgs, initialOrgId, onCreated, onCancel }: {
  orgs: Organization[];
  initialOrgId: string;
  onCreated: (key: NewEnrollmentKey) => void;
  onCancel: () => void;
}) {
  const [orgId, setOrgId] = useState(initialOrgId);
  const [siteId, setSiteId] = useState('');
  const [name, setName] = useState('');
  const [maxUsage, setMaxUsage] = useState(String(MAX_USAGE.default));
  const [expires, setExpires] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const sites = useLoad(() => (orgId ? loadSites(orgId) : Promise.resolve([])), [orgId]);
  const create = useAction((body: CreateBody) => call(api.POST('/api/v1/enrollment-keys/', { body })));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const expiry = futureTime(expires);
    const found: Errors = {
      orgId: orgId ? undefined : 'Choose an organization.',
      name: nameError(name),
      maxUsage: integerError(maxUsage, MAX_USAGE.min, MAX_USAGE.max),
      expiresAt: expiry.error,
    };
    setErrors(found);
    if (hasErrors(found) || expiry.error !== undefined) return;
    const body: CreateBody = { orgId, siteId: siteId || null, name: name.trim(), maxUsage: Number(maxUsage) };
    if (expiry.iso) body.expiresAt = expiry.iso;
    const created = await create.run(body);
    if (created) onCreated(created);
  };

  const fieldError = (field: keyof Errors) => errors[field] ?? create.error?.forField(field);
  return (
    <form className="panel" onSubmit={(e) => void submit(e)} noValidate aria-labelledby="new-enrollment-key-title">
      <h2 id="new-enrollment-key-title">New enrollment key</h2>
      <OrganizationChoice orgs={orgs} value={orgId} onChange={(id) => { setOrgId(id); setSiteId(''); }} error={fieldError('orgId')} />
      <Field
        label="Site"
        error={fieldError('siteId') ?? (sites.error ? `Cannot load the sites: ${sites.error.message}` : undefined)}
        hint="Devices enrolled with this key are placed in this site. Without one they go to the organization's oldest site (or a new site “Default”)."
      >
        <select value={siteId} onChange={(e) => setSiteId(e.target.value)} disabled={!orgId || sites.loading}>
          <option value="">{sites.loading && orgId ? 'Loading sites…' : 'No particular site'}</option>
          {sites.data?.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
        </select>
      </Field>
      <Field label="Name" error={fieldError('name')} hint="What the key is for, e.g. the rollout it belongs to.">
        <input value={name} maxLength={NAME_MAX} onChange={(e) => setName(e.target.value)} required />
      </Field>
      <Field label="Maximum uses" error={fieldError('maxUsage')} hint={`How many devices may enroll with it: ${MAX_USAGE.min} to ${MAX_USAGE.max.toLocaleString()}.`}>
        <input type="number" inputMode="numeric" min={MAX_USAGE.min} max={MAX_USAGE.max} step={1} value={maxUsage} onChange={(e) => setMaxUsage(e.target.value)} />
      </Field>
      <Field label="Expires (optional)" error={fieldError('expiresAt')} hint="In your local time. Leave empty for the server's default lifetime (60 minutes unless configured otherwise).">
        <input type="datetime-local" min={localNow()} value={expires} onChange={(e) => setExpires(e.target.value)} />
      </Field>
      <ErrorMessage error={create.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={create.pending}>{create.pending ? 'Creating…' : 'Create key'}</button>
        <button type="button" onClick={onCancel} disabled={create.pending}>Cancel</button>
      </div>
    </form>
  );
}

/**
 * Rotating replaces the key material and starts the usage count again; the usage limit and expiry
 * are kept unless changed here. An expired key needs a new expiry, or the new key is expired too.
 */
export function EnrollmentKeyRotateForm({ enrollmentKey, onRotated, onCancel }: {
  enrollmentKey: EnrollmentKey;
  onRotated: (key: NewEnrollmentKey) => void;
  onCancel: () => void;
}) {
  const [usageMode, setUsageMode] = useState<'keep' | 'set' | 'unlimited'>('keep');
  const [maxUsage, setMaxUsage] = useState(String(enrollmentKey.maxUsage ?? MAX_USAGE.default));
  const [expires, setExpires] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const rotate = useAction((body: RotateBody) => call(api.POST('/api/v1/enrollment-keys/{id}/rotate', { params: { path: { id: enrollmentKey.id } }, body })));
  const expired = enrollmentKey.status === 'expired';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const expiry = futureTime(expires);
    const found: Errors = {
      maxUsage: usageMode === 'set' ? integerError(maxUsage, MAX_USAGE.min, MAX_USAGE.max) : undefined,
      expiresAt: expiry.error ?? (expired && !expires ? 'This key has expired: give a new expiry, or the new key is expired too.' : undefined),
    };
    setErrors(found);
    if (hasErrors(found) || expiry.error !== undefined) return;
    const body: RotateBody = {};
    if (usageMode === 'set') body.maxUsage = Number(maxUsage);
    if (usageMode === 'unlimited') body.maxUsage = null;
    if (expiry.iso) body.expiresAt = expiry.iso;
    const rotated = await rotate.run(body);
    if (rotated) onRotated(rotated);
  };

  const fieldError = (field: keyof Errors) => errors[field] ?? rotate.error?.forField(field);
  const titleId = `rotate-${enrollmentKey.id}`;
  const current = enrollmentKey.maxUsage === null ? 'unlimited' : enrollmentKey.maxUsage.toLocaleString();
  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby={titleId}>
      <h3 id={titleId}>Rotate “{enrollmentKey.name}”</h3>
      <p className="warning" role="note">The current key stops working at once and a new one is shown once. Its usage count starts again from 0. Devices already enrolled are not affected.</p>
      <fieldset className={`field${fieldError('maxUsage') ? ' field-invalid' : ''}`}>
        <legend>Maximum uses</legend>
        <label className="keys-choice"><input type="radio" name={`usage-${enrollmentKey.id}`} checked={usageMode === 'keep'} onChange={() => setUsageMode('keep')} /> Keep ({current})</label>
        <div className="keys-choice">
          <label><input type="radio" name={`usage-${enrollmentKey.id}`} checked={usageMode === 'set'} onChange={() => setUsageMode('set')} /> Set to</label>
          <input
            type="number" inputMode="numeric" min={MAX_USAGE.min} max={MAX_USAGE.max} step={1} aria-label="New maximum uses"
            value={maxUsage} disabled={usageMode !== 'set'} onChange={(e) => setMaxUsage(e.target.value)}
            aria-invalid={fieldError('maxUsage') ? true : undefined}
          />
        </div>
        <label className="keys-choice"><input type="radio" name={`usage-${enrollmentKey.id}`} checked={usageMode === 'unlimited'} onChange={() => setUsageMode('unlimited')} /> Unlimited</label>
        {fieldError('maxUsage') && <small className="field-error" role="alert">{fieldError('maxUsage')}</small>}
      </fieldset>
      <Field
        label={expired ? 'New expiry' : 'New expiry (optional)'}
        error={fieldError('expiresAt')}
        hint={`In your local time. ${expired ? 'It expired' : 'Leave empty to keep the current expiry'}: ${formatDateTime(enrollmentKey.expiresAt)}.`}
      >
        <input type="datetime-local" min={localNow()} value={expires} onChange={(e) => setExpires(e.target.value)} />
      </Field>
      <ErrorMessage error={rotate.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={rotate.pending}>{rotate.pending ? 'Rotating…' : 'Rotate the key'}</button>
        <button type="button" onClick={onCancel} disabled={rotate.pending}>Cancel</button>
      </div>
    </form>
  );
}
