// The organization form, for create (POST /orgs/organizations) and edit (PATCH, changed fields
// only; the partner cannot change). System scope chooses the partner; partner scope creates in its own.
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import {
  ORG_STATUSES, ORG_TYPES, capText, checkName, checkSlug, NameAndSlugFields, dateInputToIso, isoToDateInput, parseCap, serverFieldError,
  unplacedError, useNameAndSlug, type Errors, type Organization, type Partner,
} from './common';

type OrgBody = {
  name: string;
  slug: string;
  type: Organization['type'];
  status: Organization['status'];
  maxDevices: number | null;
  contractStart: string | null;
  contractEnd: string | null;
};

const FIELDS: Record<string, string[]> = {
  partnerId: ['PARTNER_MISMATCH'], name: [], slug: ['CONFLICT'], type: [], status: [], maxDevices: [], contractStart: [], contractEnd: [],
};

export function OrganizationForm({ organization, choosePartner: systemScope = false, partners, partnerId: presetPartner, onDone, onCancel }: {
  /** The organization to edit; absent to create one. */
  organization?: Organization;
  /** System scope creating: the partner is chosen from `partners` (undefined while they load). */
  choosePartner?: boolean;
  partners?: Partner[] | undefined;
  /** The partner chosen in advance (a filter, or the partner page). */
  partnerId?: string;
  onDone: (organization: Organization) => void;
  onCancel: () => void;
}) {
  const choosePartner = !organization && systemScope;
  const [partnerId, setPartnerId] = useState(presetPartner ?? '');
  const naming = useNameAndSlug(organization);
  const [type, setType] = useState<Organization['type']>(organization?.type ?? 'customer');
  const [status, setStatus] = useState<Organization['status']>(organization?.status ?? 'active');
  const [maxDevices, setMaxDevices] = useState(capText(organization?.maxDevices ?? null));
  const [contractStart, setContractStart] = useState(isoToDateInput(organization?.contractStart ?? null));
  const [contractEnd, setContractEnd] = useState(isoToDateInput(organization?.contractEnd ?? null));
  const [errors, setErrors] = useState<Errors>({});
  const [nothing, setNothing] = useState(false);

  const save = useAction(async (body: Partial<OrgBody> & { partnerId?: string }) => {
    const saved = organization
      ? await call(api.PATCH('/api/v1/orgs/organizations/{id}', { params: { path: { id: organization.id } }, body }))
      : await call(api.POST('/api/v1/orgs/organizations', { body: body as OrgBody }));
    onDone(saved);
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: Errors = {};
    if (choosePartner && !partnerId) found.partnerId = 'Choose the partner the organization belongs to.';
    checkName(naming.name, found, 'organization');
    checkSlug(naming.slug, found);
    const body: OrgBody = {
      name: naming.name.trim(),
      slug: naming.slug,
      type,
      status,
      maxDevices: parseCap(maxDevices, found, 'maxDevices'),
      contractStart: dateInputToIso(contractStart),
      contractEnd: dateInputToIso(contractEnd),
    };
    if (contractStart && contractEnd && contractStart > contractEnd) found.contractEnd = 'The contract cannot end before it starts.';
    setErrors(found);
    setNothing(false);
    save.clearError();
    if (Object.keys(found).length > 0) return;
    if (!organization) {
      const sent = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null)) as Partial<OrgBody>;
      void save.run({ ...sent, ...(choosePartner ? { partnerId } : {}) });
      return;
    }
    const before: OrgBody = {
      name: organization.name,
      slug: organization.slug,
      type: organization.type,
      status: organization.status,
      maxDevices: organization.maxDevices,
      contractStart: dateInputToIso(isoToDateInput(organization.contractStart)),
      contractEnd: dateInputToIso(isoToDateInput(organization.contractEnd)),
    };
    const changed = Object.fromEntries(Object.entries(body).filter(([key, value]) => before[key as keyof OrgBody] !== value)) as Partial<OrgBody>;
    if (Object.keys(changed).length === 0) return setNothing(true);
    void save.run(changed);
  };

  const fieldError = (field: string) => errors[field] ?? serverFieldError(save.error, field, FIELDS[field]);

  return (
    <form className="panel tenancy-form" onSubmit={submit} noValidate aria-label={organization ? 'Edit organization' : 'Create organization'}>
      <h2>{organization ? `Edit ${organization.name}` : 'New organization'}</h2>
      {choosePartner && (
        <Field label="Partner" error={fieldError('partnerId')}>
          <select value={partnerId} required disabled={partners === undefined} onChange={(e) => setPartnerId(e.target.value)}>
            <option value="">{partners === undefined ? 'Loading partners…' : 'Choose a partner'}</option>
            {(partners ?? []).map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </Field>
      )}
      <div className="side-by-side">
        <NameAndSlugFields naming={naming} fieldError={fieldError} slugHint="Lowercase letters and digits with dashes; unique within the partner." autoFocus={!choosePartner} />
        <Field label="Type" error={fieldError('type')}>
          <select value={type} onChange={(e) => setType(e.target.value as Organization['type'])}>
            {ORG_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </Field>
        <Field label="Status" error={fieldError('status')} hint="A suspended organization's users can read but not change anything.">
          <select value={status} onChange={(e) => setStatus(e.target.value as Organization['status'])}>
            {ORG_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
        <Field label="Maximum devices" error={fieldError('maxDevices')} hint="Empty: no limit.">
          <input inputMode="numeric" value={maxDevices} onChange={(e) => setMaxDevices(e.target.value)} />
        </Field>
        <span />
        <Field label="Contract start" error={fieldError('contractStart')} hint="Optional.">
          <input type="date" value={contractStart} onChange={(e) => setContractStart(e.target.value)} />
        </Field>
        <Field label="Contract end" error={fieldError('contractEnd')} hint="Optional.">
          <input type="date" value={contractEnd} onChange={(e) => setContractEnd(e.target.value)} />
        </Field>
      </div>
      {nothing && <p className="hint" role="status">Nothing to save: no field was changed.</p>}
      <ErrorMessage error={unplacedError(save.error, FIELDS)} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.pending}>
          {save.pending ? 'Saving…' : organization ? 'Save organization' : 'Create organization'}
        </button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
