// The organization form, for create (POST /orgs/organizations) and edit (PATCH, changed fields
// only; the partner cannot change), on the tenancy form's base. System scope chooses the partner;
// partner scope creates in its own.
import { useState } from 'react';
import { api, call } from '../../api/client';
import { dateInputToIso, isoToDateInput } from '../../ui/format';
import { Field } from '../../ui/forms';
import { capText, parseCap, type Errors } from './field-checks';
import { NameAndSlugFields, useNameAndSlug } from './name-and-slug';
import { ORG_STATUSES, ORG_TYPES, type Organization, type Partner } from './resources';
import { TenancyForm, useTenancyForm } from './tenancy-form';

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

/** The saved values as the form would send them (contract days at midnight UTC), to find what changed. */
function savedBody(org: Organization): OrgBody {
  return {
    name: org.name,
    slug: org.slug,
    type: org.type,
    status: org.status,
    maxDevices: org.maxDevices,
    contractStart: dateInputToIso(isoToDateInput(org.contractStart)),
    contractEnd: dateInputToIso(isoToDateInput(org.contractEnd)),
  };
}

/** The changed fields of `organization` saved, or a new organization created. */
function saveOrganization(organization: Organization | undefined, body: Partial<OrgBody>): Promise<Organization> {
  return organization
    ? call(api.PATCH('/api/v1/orgs/organizations/{id}', { params: { path: { id: organization.id } }, body }))
    : call(api.POST('/api/v1/orgs/organizations', { body: body as OrgBody }));
}

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
  const form = useTenancyForm<OrgBody, Organization>({
    before: organization && savedBody(organization),
    fields: FIELDS,
    send: (body) => saveOrganization(organization, body),
    onDone,
  });

  const submit = () => {
    const found: Errors = {};
    if (choosePartner && !partnerId) found.partnerId = 'Choose the partner the organization belongs to.';
    naming.check(found, 'organization');
    const values: OrgBody = {
      ...naming.values(),
      type,
      status,
      maxDevices: parseCap(maxDevices, found, 'maxDevices'),
      contractStart: dateInputToIso(contractStart),
      contractEnd: dateInputToIso(contractEnd),
    };
    if (contractStart && contractEnd && contractStart > contractEnd) found.contractEnd = 'The contract cannot end before it starts.';
    form.submit(found, values, choosePartner ? { partnerId } : {});
  };

  return (
    <TenancyForm noun="organization" existing={organization} form={form} onSubmit={submit} onCancel={onCancel}>
      {choosePartner && (
        <Field label="Partner" error={form.fieldError('partnerId')}>
          <select value={partnerId} required disabled={partners === undefined} onChange={(e) => setPartnerId(e.target.value)}>
            <option value="">{partners === undefined ? 'Loading partners…' : 'Choose a partner'}</option>
            {(partners ?? []).map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </Field>
      )}
      <div className="side-by-side">
        <NameAndSlugFields naming={naming} fieldError={form.fieldError} slugHint="Lowercase letters and digits with dashes; unique within the partner." autoFocus={!choosePartner} />
        <Field label="Type" error={form.fieldError('type')}>
          <select value={type} onChange={(e) => setType(e.target.value as Organization['type'])}>
            {ORG_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </Field>
        <Field label="Status" error={form.fieldError('status')} hint="A suspended organization's users can read but not change anything.">
          <select value={status} onChange={(e) => setStatus(e.target.value as Organization['status'])}>
            {ORG_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
        <Field label="Maximum devices" error={form.fieldError('maxDevices')} hint="Empty: no limit.">
          <input inputMode="numeric" value={maxDevices} onChange={(e) => setMaxDevices(e.target.value)} />
        </Field>
        <span />
        <Field label="Contract start" error={form.fieldError('contractStart')} hint="Optional.">
          <input type="date" value={contractStart} onChange={(e) => setContractStart(e.target.value)} />
        </Field>
        <Field label="Contract end" error={form.fieldError('contractEnd')} hint="Optional.">
          <input type="date" value={contractEnd} onChange={(e) => setContractEnd(e.target.value)} />
        </Field>
      </div>
    </TenancyForm>
  );
}
