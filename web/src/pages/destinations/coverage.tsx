// What a destination covers: the names behind owner ids, the list's filter by them, and the choice a
// new destination's form offers (an organization; a whole partner; the platform), as API.md §9 admits.
import { api, call } from '../../api/client';
import { loadOrganizations, loadPartnersInReach } from '../../api/directory';
import { useCan, useUser } from '../../session/session';
import { Field } from '../../ui/forms';
import { useLoad, type Loaded } from '../../ui/use-load';
import type { CreateBody, Directory } from './destination';

/** The organizations and partners the user reaches, and whether a partner user reaches them all. */
export function useDirectory(): Loaded<Directory> {
  const user = useUser();
  const can = useCan();
  const readsUsers = can('users:read');
  return useLoad(async () => {
    const [orgs, partners, wholePartner] = await Promise.all([
      loadOrganizations(),
      loadPartnersInReach(user.scope),
      user.scope === 'partner' && readsUsers
        ? call(api.GET('/api/v1/users/{id}', { params: { path: { id: user.id } } })).then((me) => me.orgAccess === 'all', () => null)
        : Promise.resolve(null),
    ]);
    return { orgs, partners, wholePartner };
  }, [user.id, user.scope, readsUsers]);
}

/** A coverage choice as one select value: `org:<id>`, `partner:<id>`, `platform`, or '' for none yet. */
export type Cover = string;

export function coverBody(cover: Cover): Pick<CreateBody, 'orgId' | 'partnerId'> {
  if (cover.startsWith('org:')) return { orgId: cover.slice(4) };
  if (cover.startsWith('partner:')) return { partnerId: cover.slice(8) };
  return {};
}

/** The choice a new form starts with: the user's own organization, the list's filter, or the only one. */
export function initialCover(user: { scope: string; orgId: string | null }, directory: Directory, filter: { orgId: string; partnerId: string }): Cover {
  if (user.scope === 'organization') return user.orgId ? `org:${user.orgId}` : '';
  if (filter.orgId) return `org:${filter.orgId}`;
  if (filter.partnerId) return `partner:${filter.partnerId}`;
  return directory.orgs.length === 1 && user.scope === 'partner' ? `org:${directory.orgs[0]!.id}` : '';
}

/** Whether the user has anything to create a destination for. */
export function canCoverAnything(scope: string, directory: Directory): boolean {
  return scope === 'system' || directory.orgs.length > 0 || (scope === 'partner' && directory.wholePartner !== false);
}

export function CoverageChoice({ directory, value, onChange, error }: { directory: Directory; value: Cover; onChange: (cover: Cover) => void; error?: string | undefined }) {
  const user = useUser();
  if (user.scope === 'organization') {
    const own = directory.orgs.find((o) => o.id === user.orgId);
    return (
      <Field label="Covers" error={error} hint="Destinations you create receive your organization’s audit events.">
        <input value={own?.name ?? user.orgId ?? ''} readOnly />
      </Field>
    );
  }
  const partnerHint = user.scope === 'partner' && directory.wholePartner === null
    ? ' “All organizations” needs access to every organization of your partner.'
    : '';
  return (
    <Field label="Covers" error={error} hint={`Whose audit events the destination receives.${partnerHint}`}>
      <select value={value} onChange={(e) => onChange(e.target.value)} required>
        <option value="">Choose what it covers…</option>
        {user.scope === 'system' && <option value="platform">The whole platform: every organization and the platform’s own events</option>}
        {user.scope === 'partner' && directory.wholePartner !== false && user.partnerId && (
          <option value={`partner:${user.partnerId}`}>All organizations of my partner ({directory.partners[0]?.name ?? 'present and future'})</option>
        )}
        {user.scope === 'system' && directory.partners.length > 0 && (
          <optgroup label="All organizations of a partner">
            {directory.partners.map((p) => <option key={p.id} value={`partner:${p.id}`}>All organizations of {p.name}</option>)}
          </optgroup>
        )}
        {directory.orgs.length > 0 && (
          <optgroup label="One organization">
            {directory.orgs.map((o) => <option key={o.id} value={`org:${o.id}`}>{o.name}{o.status === 'active' ? '' : ` (${o.status})`}</option>)}
          </optgroup>
        )}
      </select>
    </Field>
  );
}

/**
 * The list's filter: one organization's destinations, or a partner's partner-wide ones. Not shown
 * to a user who reaches one organization and nothing wider.
 */
export function CoverageFilter({ directory, orgId, partnerId, onChange }: {
  directory: Directory;
  orgId: string;
  partnerId: string;
  onChange: (filter: { orgId: string; partnerId: string }) => void;
}) {
  const user = useUser();
  const partners = user.scope === 'system' ? directory.partners : user.scope === 'partner' && directory.wholePartner !== false ? directory.partners : [];
  if (directory.orgs.length <= 1 && partners.length === 0 && !orgId && !partnerId) return null;
  const value = orgId ? `org:${orgId}` : partnerId ? `partner:${partnerId}` : '';
  const choose = (cover: Cover) => {
    const body = coverBody(cover);
    onChange({ orgId: body.orgId ?? '', partnerId: body.partnerId ?? '' });
  };
  return (
    <form className="filters" aria-label="Filter event destinations" onSubmit={(e) => e.preventDefault()}>
      <Field label="Organization">
        <select value={value} onChange={(e) => choose(e.target.value)}>
          <option value="">All destinations</option>
          {partners.length > 0 && (
            <optgroup label="Partner-wide destinations">
              {partners.map((p) => <option key={p.id} value={`partner:${p.id}`}>All organizations of {p.name}</option>)}
            </optgroup>
          )}
          <optgroup label="One organization">
            {directory.orgs.map((o) => <option key={o.id} value={`org:${o.id}`}>{o.name}</option>)}
          </optgroup>
        </select>
      </Field>
    </form>
  );
}
