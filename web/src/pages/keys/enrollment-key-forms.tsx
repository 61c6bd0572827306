// The forms of the enrollment key screen, on the key form base: create and rotate (both bring back a
// key shown once).
import { useState } from 'react';
import { api, call } from '../../api/client';
import { loadSitesOf, type Organization } from '../../api/directory';
import type { paths } from '../../api/schema';
import type { Ok } from '../../api/types';
import { Field } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { useLoad } from '../../ui/use-load';
import { CountField, ExpiryField, KeyForm, NewKeyForm, futureTime, integerError, useKeyForm, useNewKeyFields, type Range } from './key-form';

export type EnrollmentKey = Ok<'/api/v1/enrollment-keys/{id}', 'get'>;
export type NewEnrollmentKey = Ok<'/api/v1/enrollment-keys', 'post'>;
type CreateBody = paths['/api/v1/enrollment-keys']['post']['requestBody']['content']['application/json'];
type RotateBody = NonNullable<paths['/api/v1/enrollment-keys/{id}/rotate']['post']['requestBody']['content']['application/json']>;
type FieldName = 'orgId' | 'siteId' | 'name' | 'maxUsage' | 'expiresAt';

/** The enrollment key schema's maxUsage: an integer 1-100000, 1 when not given (null, unlimited, on rotate only). */
const MAX_USAGE: Range = { min: 1, max: 100_000, default: 1 };

export function EnrollmentKeyCreateForm({ orgs, initialOrgId, onCreated, onCancel }: {
  orgs: Organization[];
  initialOrgId: string;
  onCreated: (key: NewEnrollmentKey) => void;
  onCancel: () => void;
}) {
  const fields = useNewKeyFields(initialOrgId);
  const [siteId, setSiteId] = useState('');
  const [maxUsage, setMaxUsage] = useState(String(MAX_USAGE.default));
  const sites = useLoad(() => (fields.orgId ? loadSitesOf(fields.orgId) : Promise.resolve([])), [fields.orgId]);
  const form = useKeyForm<FieldName, CreateBody, NewEnrollmentKey>((body) => call(api.POST('/api/v1/enrollment-keys', { body })), onCreated);
  const submit = () => form.submit(
    { ...fields.errors(), maxUsage: integerError(maxUsage, MAX_USAGE) },
    () => ({ ...fields.body(), siteId: siteId || null, maxUsage: Number(maxUsage) }),
  );

  const site = (
    <Field
      label="Site"
      error={form.fieldError('siteId') ?? (sites.error ? `Cannot load the sites: ${sites.error.message}` : undefined)}
      hint="Devices enrolled with this key are placed in this site. Without one they go to the organization's oldest site (or a new site “Default”)."
    >
      <select value={siteId} onChange={(e) => setSiteId(e.target.value)} disabled={!fields.orgId || sites.loading}>
        <option value="">{sites.loading && fields.orgId ? 'Loading sites…' : 'No particular site'}</option>
        {sites.data?.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
      </select>
    </Field>
  );
  return (
    <NewKeyForm
      form={form} fields={fields} orgs={orgs} title="New enrollment key" titleId="new-enrollment-key-title"
      onOrganization={(id) => { fields.setOrgId(id); setSiteId(''); }}
      beforeName={site}
      nameHint="What the key is for, e.g. the rollout it belongs to."
      expiryHint="In your local time. Leave empty for the server's default lifetime (60 minutes unless configured otherwise)."
      onSubmit={() => void submit()} onCancel={onCancel}
    >
      <CountField label="Maximum uses" range={MAX_USAGE} value={maxUsage} onChange={setMaxUsage} error={form.fieldError('maxUsage')} hint={`How many devices may enroll with it: ${MAX_USAGE.min} to ${MAX_USAGE.max.toLocaleString()}.`} />
    </NewKeyForm>
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
  const form = useKeyForm<FieldName, RotateBody, NewEnrollmentKey>(
    (body) => call(api.POST('/api/v1/enrollment-keys/{id}/rotate', { params: { path: { id: enrollmentKey.id } }, body })),
    onRotated,
  );
  const expired = enrollmentKey.status === 'expired';
  const submit = () => {
    const expiry = futureTime(expires);
    return form.submit({
      maxUsage: usageMode === 'set' ? integerError(maxUsage, MAX_USAGE) : undefined,
      expiresAt: expiry.error ?? (expired && !expires ? 'This key has expired: give a new expiry, or the new key is expired too.' : undefined),
    }, () => ({
      ...(usageMode === 'set' ? { maxUsage: Number(maxUsage) } : usageMode === 'unlimited' ? { maxUsage: null } : {}),
      ...(expiry.iso ? { expiresAt: expiry.iso } : {}),
    }));
  };

  const usageError = form.fieldError('maxUsage');
  const radio = (mode: typeof usageMode) => (
    <input type="radio" name={`usage-${enrollmentKey.id}`} checked={usageMode === mode} onChange={() => setUsageMode(mode)} />
  );
  const current = enrollmentKey.maxUsage === null ? 'unlimited' : enrollmentKey.maxUsage.toLocaleString();
  return (
    <KeyForm
      form={form} titleId={`rotate-${enrollmentKey.id}`} title={<>Rotate “{enrollmentKey.name}”</>} inRow
      submitLabels={['Rotate the key', 'Rotating…']} onSubmit={() => void submit()} onCancel={onCancel}
    >
      <p className="warning" role="note">The current key stops working at once and a new one is shown once. Its usage count starts again from 0. Devices already enrolled are not affected.</p>
      <fieldset className={`field${usageError ? ' field-invalid' : ''}`}>
        <legend>Maximum uses</legend>
        <label className="keys-choice">{radio('keep')} Keep ({current})</label>
        <div className="keys-choice">
          <label>{radio('set')} Set to</label>
          <input
            type="number" inputMode="numeric" min={MAX_USAGE.min} max={MAX_USAGE.max} step={1} aria-label="New maximum uses"
            value={maxUsage} disabled={usageMode !== 'set'} onChange={(e) => setMaxUsage(e.target.value)}
            aria-invalid={usageError ? true : undefined}
          />
        </div>
        <label className="keys-choice">{radio('unlimited')} Unlimited</label>
        {usageError && <small className="field-error" role="alert">{usageError}</small>}
      </fieldset>
      <ExpiryField
        label={expired ? 'New expiry' : 'New expiry (optional)'}
        value={expires}
        onChange={setExpires}
        error={form.fieldError('expiresAt')}
        hint={`In your local time. ${expired ? 'It expired' : 'Leave empty to keep the current expiry'}: ${formatDateTime(enrollmentKey.expiresAt)}.`}
      />
    </KeyForm>
  );
}
