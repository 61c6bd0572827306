// The organizations a key belongs to: those the user reaches (GET /orgs admits all three scopes), the
// list's filter by them, and the choice a new key's form offers.
import { loadOrganizations, type Organization } from '../../api/directory';
import { useUser } from '../../session/session';
import { Field } from '../../ui/forms';
import { useLoad, type Loaded } from '../../ui/use-load';

export function useOrganizations(): Loaded<Organization[]> {
  return useLoad(loadOrganizations, []);
}

export function orgName(orgs: Organization[] | undefined, id: string): string {
  return orgs?.find((o) => o.id === id)?.name ?? id;
}

/** The organization a form starts with: the user's own, or the list's filter, or the only one. */
export function initialOrg(user: { scope: string; orgId: string | null }, orgs: Organization[], filter: string): string {
  if (user.scope === 'organization') return user.orgId ?? '';
  if (filter) return filter;
  return orgs.length === 1 ? orgs[0]!.id : '';
}

/** The organization filter of a list; not shown to a user who reaches one organization only. */
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
