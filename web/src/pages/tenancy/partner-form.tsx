// The partner form, for create (POST /orgs/partners) and edit (PATCH /orgs/partners/:id, changed
// fields only). Validates as SPEC and the schema state before sending; the server's refusals land
// next to their field (a duplicate slug is 409 next to Slug).
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import {
  PARTNER_PLANS, PARTNER_STATUSES, PARTNER_TYPES, capText, checkEmail, checkName, checkSlug, NameAndSlugFields, parseCap, serverFieldError,
  unplacedError, useNameAndSlug, type Errors, type Partner,
} from './common';

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
  const [errors, setErrors] = useState<Errors>({});
  const [nothing, setNothing] = useState(false);

  const save = useAction(async (body: Partial<PartnerBody>) => {
    const saved = partner
      ? await call(api.PATCH('/api/v1/orgs/partners/{id}', { params: { path: { id: partner.id } }, body }))
      : await call(api.POST('/api/v1/orgs/partners', { body: body as PartnerBody }));
    onDone(saved);
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: Errors = {};
    checkName(naming.name, found, 'partner');
    checkSlug(naming.slug, found);
    checkEmail(billingEmail, found, 'billingEmail');
    const body: PartnerBody = {
      name: naming.name.trim(),
      slug: naming.slug,
      type,
      plan,
      status,
      billingEmail: billingEmail.trim() || null,
      maxOrganizations: parseCap(maxOrganizations, found, 'maxOrganizations'),
      maxDevices: parseCap(maxDevices, found, 'maxDevices'),
    };
    setErrors(found);
    setNothing(false);
    save.clearError();
    if (Object.keys(found).length > 0) return;
    if (!partner) {
      const { billingEmail: email, maxOrganizations: orgCap, maxDevices: deviceCap, ...rest } = body;
      void save.run({ ...rest, ...(email ? { billingEmail: email } : {}), ...(orgCap !== null ? { maxOrganizations: orgCap } : {}), ...(deviceCap !== null ? { maxDevices: deviceCap } : {}) });
      return;
    }
    const changed = Object.fromEntries(
      Object.entries(body).filter(([key, value]) => partner[key as keyof PartnerBody] !== value),
    ) as Partial<PartnerBody>;
    if (Object.keys(changed).length === 0) return setNothing(true);
    void save.run(changed);
  };

  const fieldError = (field: string) => errors[field] ?? serverFieldError(save.error, field, FIELDS[field]);

  return (
    <form className="panel tenancy-form" onSubmit={submit} noValidate aria-label={partner ? 'Edit partner' : 'Create partner'}>
      <h2>{partner ? `Edit ${partner.name}` : 'New partner'}</h2>
      <div className="side-by-side">
        <NameAndSlugFields naming={naming} fieldError={fieldError} slugHint="Lowercase letters and digits with dashes; unique among partners." autoFocus />
        <Field label="Type" error={fieldError('type')}>
          <select value={type} onChange={(e) => setType(e.target.value as Partner['type'])}>
            {PARTNER_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </Field>
        <Field label="Plan" error={fieldError('plan')}>
          <select value={plan} onChange={(e) => setPlan(e.target.value as Partner['plan'])}>
            {PARTNER_PLANS.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </Field>
        <Field label="Status" error={fieldError('status')} hint="Users of a partner that is not active are refused.">
          <select value={status} onChange={(e) => setStatus(e.target.value as Partner['status'])}>
            {PARTNER_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
        <Field label="Billing e-mail" error={fieldError('billingEmail')} hint="Optional.">
          <input type="email" value={billingEmail} maxLength={255} onChange={(e) => setBillingEmail(e.target.value)} />
        </Field>
        <Field label="Maximum organizations" error={fieldError('maxOrganizations')} hint="Empty: no limit.">
          <input inputMode="numeric" value={maxOrganizations} onChange={(e) => setMaxOrganizations(e.target.value)} />
        </Field>
        <Field label="Maximum devices" error={fieldError('maxDevices')} hint="Empty: no limit.">
          <input inputMode="numeric" value={maxDevices} onChange={(e) => setMaxDevices(e.target.value)} />
        </Field>
      </div>
      {nothing && <p className="hint" role="status">Nothing to save: no field was changed.</p>}
      <ErrorMessage error={unplacedError(save.error, FIELDS)} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.pending}>
          {save.pending ? 'Saving…' : partner ? 'Save partner' : 'Create partner'}
        </button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
