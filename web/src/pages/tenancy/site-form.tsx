// The site form, for create (POST /orgs/sites) and edit (PATCH /orgs/sites/:id, changed fields
// only; the organization cannot change), on the tenancy form's base. The timezone must be one this browser knows
// (Intl.supportedValuesOf('timeZone')) before it is sent; the address is free-form JSON on the
// server, written here as street / city / region / postal code / country.
import { useId, useMemo, useState } from 'react';
import { api, call } from '../../api/client';
import { Field } from '../../ui/forms';
import { checkName, type Errors } from './field-checks';
import type { Organization, Site } from './resources';
import { TenancyForm, useTenancyForm } from './tenancy-form';

type Address = Record<string, unknown>;
type SiteBody = { name: string; timezone: string; address: Address | null };

export const ADDRESS_FIELDS = [
  ['street', 'Street'],
  ['city', 'City'],
  ['region', 'State or region'],
  ['postalCode', 'Postal code'],
  ['country', 'Country'],
] as const;
type AddressKey = (typeof ADDRESS_FIELDS)[number][0];

const FIELDS: Record<string, string[]> = { orgId: ['ORG_ACCESS_DENIED'], name: [], timezone: [], address: [] };

let zones: { all: Set<string>; lower: Map<string, string>; list: string[] } | null = null;
/** The IANA names this browser supports, plus UTC (which some browsers leave out of the list). */
function timezones() {
  if (zones) return zones;
  let list: string[] = [];
  try {
    list = Intl.supportedValuesOf('timeZone');
  } catch {
    list = [];
  }
  const all = new Set([...list, 'UTC', 'Etc/UTC']);
  zones = { all, lower: new Map([...all].map((z) => [z.toLowerCase(), z])), list: [...all].sort() };
  return zones;
}

/** The IANA name a browser resolves `value` to (an alias such as Asia/Kolkata → its canonical form), if any. */
function resolvedZone(value: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * Why a timezone is refused, or undefined when it is a name of Intl.supportedValuesOf('timeZone')
 * (or UTC), or an alias the browser resolves to one of them.
 */
export function timezoneProblem(value: string, keep?: string): string | undefined {
  if (!value) return 'Enter a timezone, e.g. UTC or Europe/Zurich.';
  if (value === keep) return undefined;
  const known = timezones();
  if (known.all.size <= 2) return undefined; // no list in this browser: the server checks
  if (value.length > 50) return 'The timezone can have at most 50 characters.';
  if (known.all.has(value)) return undefined;
  const proper = known.lower.get(value.toLowerCase());
  if (proper) return `Unknown timezone. Did you mean ${proper}?`;
  const resolved = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(value) ? resolvedZone(value) : null;
  if (resolved && known.all.has(resolved) && resolved.toLowerCase() !== value.toLowerCase()) return undefined;
  return 'Unknown timezone: use an IANA name such as UTC, Europe/Zurich or America/New_York.';
}

export function addressText(address: Address | null): string {
  if (!address) return '—';
  const known = ADDRESS_FIELDS.map(([key]) => address[key]).filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  const other = Object.entries(address).filter(([key]) => !ADDRESS_FIELDS.some(([k]) => k === key)).map(([key, v]) => `${key}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return [...known, ...other].join(', ') || '—';
}

/** The changed fields of `site` saved, or a new site created. */
function saveSite(site: Site | undefined, body: Partial<SiteBody>): Promise<Site> {
  return site
    ? call(api.PATCH('/api/v1/orgs/sites/{id}', { params: { path: { id: site.id } }, body }))
    : call(api.POST('/api/v1/orgs/sites', { body: body as SiteBody & { orgId: string } }));
}

export function SiteForm({ site, orgId, chooseOrg: choose = false, organizations, onDone, onCancel }: {
  /** The site to edit; absent to create one. */
  site?: Site;
  /** The organization of a new site (fixed, or preselected with `chooseOrg`). */
  orgId?: string;
  /** A new site's organization is chosen from `organizations` (undefined while they load). */
  chooseOrg?: boolean;
  organizations?: Organization[] | undefined;
  onDone: (site: Site) => void;
  onCancel: () => void;
}) {
  const listId = useId();
  const chooseOrg = !site && choose;
  const [org, setOrg] = useState(orgId ?? '');
  const [name, setName] = useState(site?.name ?? '');
  const [timezone, setTimezone] = useState(site?.timezone ?? 'UTC');
  const initialAddress = useMemo(() => {
    const a = site?.address ?? {};
    return Object.fromEntries(ADDRESS_FIELDS.map(([key]) => [key, typeof a[key] === 'string' ? (a[key] as string) : ''])) as Record<AddressKey, string>;
  }, [site]);
  const [address, setAddress] = useState(initialAddress);
  const form = useTenancyForm<SiteBody, Site>({
    before: site && { name: site.name, timezone: site.timezone, address: site.address && Object.keys(site.address).length > 0 ? site.address : null },
    fields: FIELDS,
    send: (body) => saveSite(site, body),
    onDone,
  });

  const submit = () => {
    const found: Errors = {};
    if (chooseOrg && !org) found.orgId = 'Choose the organization the site belongs to.';
    checkName(name, found, 'site');
    const zone = timezone.trim();
    const zoneProblem = timezoneProblem(zone, site?.timezone);
    if (zoneProblem) found.timezone = zoneProblem;
    for (const [key, label] of ADDRESS_FIELDS) if (address[key].trim().length > 255) found[`address.${key}`] = `${label} can have at most 255 characters.`;

    // Keep address keys this form does not know; drop emptied ones.
    const merged: Address = { ...(site?.address ?? {}) };
    for (const [key] of ADDRESS_FIELDS) {
      const value = address[key].trim();
      if (value) merged[key] = value;
      else delete merged[key];
    }
    form.submit(found, { name: name.trim(), timezone: zone, address: Object.keys(merged).length > 0 ? merged : null }, { orgId: org });
  };

  const { fieldError } = form;
  return (
    <TenancyForm noun="site" existing={site} form={form} onSubmit={submit} onCancel={onCancel}>
      {chooseOrg && (
        <Field label="Organization" error={fieldError('orgId')}>
          <select value={org} required disabled={!organizations} onChange={(e) => setOrg(e.target.value)}>
            <option value="">{organizations ? 'Choose an organization' : 'Loading organizations…'}</option>
            {organizations?.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
          </select>
        </Field>
      )}
      <div className="side-by-side">
        <Field label="Name" error={fieldError('name')}>
          <input value={name} required autoFocus={!chooseOrg} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Timezone" error={fieldError('timezone')} hint="IANA name, e.g. UTC or Europe/Zurich.">
          <input value={timezone} list={listId} required spellCheck={false} autoCapitalize="off" onChange={(e) => setTimezone(e.target.value)} />
        </Field>
      </div>
      <datalist id={listId}>
        {timezones().list.map((z) => <option key={z} value={z} />)}
      </datalist>
      <fieldset className="address-fields">
        <legend>Address (optional)</legend>
        <div className="side-by-side">
          {ADDRESS_FIELDS.map(([key, label]) => (
            <Field key={key} label={label} error={form.errors[`address.${key}`] ?? (key === 'street' ? fieldError('address') : undefined)}>
              <input value={address[key]} onChange={(e) => setAddress((a) => ({ ...a, [key]: e.target.value }))} />
            </Field>
          ))}
        </div>
      </fieldset>
    </TenancyForm>
  );
}
