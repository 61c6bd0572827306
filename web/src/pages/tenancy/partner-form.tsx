// The partner form, for create (POST /orgs/partners) and edit (PATCH /orgs/partners/:id, changed
// fields only), on the tenancy form's base (a duplicate slug is 409 next to Slug).
import { useState } from 'react';
import { api, call } from '../../api/client';
import { Field } from '../../ui/forms';
import { capText, checkEmail, parseCap, type Errors } from './field-checks';
import { NameAndSlugFields, useNameAndSlug } from './name-and-slug';
import { PARTNER_PLANS, PARTNER_STATUSES, PARTNER_TYPES, type Partner } from './resources';
import { TenancyForm, useTenancyForm } from './tenancy-form';

type PartnerBody = {
  name: string;
  slug: string;
  type: Partner['type'];
  plan: Partner['plan'];
  status: Partner['status'];
  billingEmail: string | null;
  maxOrganizations: number | null;
  maxDevices: number | null;
};

const FIELDS: Record<string, string[]> = {
  name: [], slug: ['CONFLICT'], type: [], plan: [], status: [], billingEmail: [], maxOrganizations: [], maxDevices: [],
};

/** The changed fields of `partner` saved, or a new partner created. */
function savePartner(partner: Partner | undefined, body: Partial<PartnerBody>): Promise<Partner> {
  return partner
    ? call(api.PATCH('/api/v1/orgs/partners/{id}', { params: { path: { id: partner.id } }, body }))
    : call(api.POST('/api/v1/orgs/partners', { body: body as PartnerBody }));
}

export function PartnerForm({ partner, onDone, onCancel }: {
  /** The partner to edit; absent to create one. */
  partner?: Partner;
  onDone: (partner: Partner) => void;
  onCancel: () => void;
}) {
  const naming = useNameAndSlug(partner);
  const [type, setType] = useState<Partner['type']>(partner?.type ?? 'msp');
  const [plan, setPlan] = useState<Partner['plan']>(partner?.plan ?? 'free');
  const [status, setStatus] = useState<Partner['status']>(partner?.status ?? 'active');
  const [billingEmail, setBillingEmail] = useState(partner?.billingEmail ?? '');
  const [maxOrganizations, setMaxOrganizations] = useState(capText(partner?.maxOrganizations ?? null));
  const [maxDevices, setMaxDevices] = useState(capText(partner?.maxDevices ?? null));
  const form = useTenancyForm<PartnerBody, Partner>({
    before: partner,
    fields: FIELDS,
    send: (body) => savePartner(partner, body),
    onDone,
  });

  const submit = () => {
    const found: Errors = {};
    naming.check(found, 'partner');
    checkEmail(billingEmail, found, 'billingEmail');
    form.submit(found, {
      ...naming.values(),
      type,
      plan,
      status,
      billingEmail: billingEmail.trim() || null,
      maxOrganizations: parseCap(maxOrganizations, found, 'maxOrganizations'),
      maxDevices: parseCap(maxDevices, found, 'maxDevices'),
    });
  };

  return (
    <TenancyForm noun="partner" existing={partner} form={form} onSubmit={submit} onCancel={onCancel}>
      <div className="side-by-side">
        <NameAndSlugFields naming={naming} fieldError={form.fieldError} slugHint="Lowercase letters and digits with dashes; unique among partners." autoFocus />
        <Field label="Type" error={form.fieldError('type')}>
          <select value={type} onChange={(e) => setType(e.target.value as Partner['type'])}>
            {PARTNER_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </Field>
        <Field label="Plan" error={form.fieldError('plan')}>
          <select value={plan} onChange={(e) => setPlan(e.target.value as Partner['plan'])}>
            {PARTNER_PLANS.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </Field>
        <Field label="Status" error={form.fieldError('status')} hint="Users of a partner that is not active are refused.">
          <select value={status} onChange={(e) => setStatus(e.target.value as Partner['status'])}>
            {PARTNER_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
        <Field label="Billing e-mail" error={form.fieldError('billingEmail')} hint="Optional.">
          <input type="email" value={billingEmail} onChange={(e) => setBillingEmail(e.target.value)} />
        </Field>
        <Field label="Maximum organizations" error={form.fieldError('maxOrganizations')} hint="Empty: no limit.">
          <input inputMode="numeric" value={maxOrganizations} onChange={(e) => setMaxOrganizations(e.target.value)} />
        </Field>
        <Field label="Maximum devices" error={form.fieldError('maxDevices')} hint="Empty: no limit.">
          <input inputMode="numeric" value={maxDevices} onChange={(e) => setMaxDevices(e.target.value)} />
        </Field>
      </div>
    </TenancyForm>
  );
}
