// Organizations. Partner and system scope: the paginated GET /orgs/organizations (name search and page
// size in the address; system: with a partner filter), create, and for partner scope the display
// order. Organization scope: its own organization from GET /orgs.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { Field } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { pageSizeOf, useListQuery } from '../../ui/list-query';
import { PageSizeSelect, Pager, SearchField } from '../../ui/pager';
import { Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad } from '../../ui/use-load';
import { namesById, useAccessibleOrganizations, usePartnerOptions } from './data';
import { NotAvailable, RouteNotice } from './page-notices';
import type { Organization } from './resources';
import { OrganizationForm } from './organization-form';
import { OrganizationOrder } from './organization-order';

export function OrganizationsPage() {
  const user = useUser();
  const can = useCan();
  if (!can('organizations:read')) {
    return <NotAvailable title="Organizations">Organizations are not available for your account: it lacks the organizations:read permission.</NotAvailable>;
  }
  if (user.scope === 'organization') return <OwnOrganization />;
  return <OrganizationList system={user.scope === 'system'} canWrite={can('organizations:write')} />;
}

/** Organization scope: the one organization the user belongs to. */
function OwnOrganization() {
  const orgs = useAccessibleOrganizations();
  return (
    <main id="main" className="page">
      <h1>Organizations</h1>
      <p className="hint">Your account belongs to this organization.</p>
      <Loadable state={orgs} isEmpty={(list) => list.length === 0} empty="Your account is not linked to an organization you can see.">
        {(list) => <OrganizationTable organizations={list} />}
      </Loadable>
    </main>
  );
}

function OrganizationList({ system, canWrite }: { system: boolean; canWrite: boolean }) {
  const navigate = useNavigate();
  const { page, filters, key, setPage, setFilters } = useListQuery(['partnerId', 'search', 'limit']);
  const partnerFilter = filters.partnerId;
  const { search, limit } = filters;
  const [creating, setCreating] = useState(false);
  const [ordering, setOrdering] = useState(false);
  const partners = usePartnerOptions(system);
  const list = useLoad(
    () => call(api.GET('/api/v1/orgs/organizations', { params: { query: { page, limit: pageSizeOf(limit), ...(partnerFilter ? { partnerId: partnerFilter } : {}), ...(search ? { search } : {}) } } })),
    [key],
  );
  const partnerNames = namesById(partners.data);

  return (
    <main id="main" className="page">
      <div className="tenancy-header">
        <h1>Organizations</h1>
        <div className="actions">
          {canWrite && !system && (
            <button type="button" aria-expanded={ordering} onClick={() => setOrdering((v) => !v)}>
              {ordering ? 'Close display order' : 'Change display order'}
            </button>
          )}
          {canWrite && !creating && <button type="button" className="primary" onClick={() => setCreating(true)}>New organization</button>}
        </div>
      </div>
      <RouteNotice />
      {creating && (
        <OrganizationForm
          choosePartner={system}
          partners={partners.data}
          partnerId={partnerFilter || undefined}
          onCancel={() => setCreating(false)}
          onDone={(org) => navigate(`/organizations/${org.id}`, { state: { notice: `Organization ${org.name} created.` } })}
        />
      )}
      {ordering && <OrganizationOrder onSaved={list.reload} />}
      <div className="filters" role="search" aria-label="Filter organizations">
        <SearchField label="Search name" value={search} onSearch={(v) => setFilters({ search: v })} />
        {system && (
          <Field label="Show organizations of" hint={partners.error ? `Partners could not be loaded: ${partners.error.message}` : undefined}>
            <select value={partnerFilter} onChange={(e) => setFilters({ partnerId: e.target.value })}>
              <option value="">All partners</option>
              {partners.data?.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
              {partnerFilter && partners.data && !partnerNames.has(partnerFilter) && <option value={partnerFilter}>Partner {partnerFilter}</option>}
            </select>
          </Field>
        )}
        <PageSizeSelect value={limit} onChange={(v) => setFilters({ limit: v })} />
      </div>
      <Loadable state={list} isEmpty={(body) => body.data.length === 0 && page === 1} empty={search ? `No organization name contains “${search}”.` : partnerFilter ? 'This partner has no organizations.' : 'No organizations yet.'}>
        {(body) => (
          <>
            <OrganizationTable organizations={body.data} partnerNames={system ? partnerNames : undefined} />
            <Pager list={body} onPage={setPage} label="Organization pages" />
          </>
        )}
      </Loadable>
    </main>
  );
}

/** A table of organizations; with `partnerNames`, a Partner column too (system scope). */
export function OrganizationTable({ organizations, partnerNames }: { organizations: Organization[]; partnerNames?: Map<string, string> }) {
  return (
    <table aria-label="Organizations">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Slug</th>
          {partnerNames && <th scope="col">Partner</th>}
          <th scope="col">Status</th>
          <th scope="col">Type</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {organizations.map((org) => (
          <tr key={org.id}>
            <td><Link to={`/organizations/${org.id}`}>{org.name}</Link></td>
            <td><code>{org.slug}</code></td>
            {partnerNames && <td><Link to={`/partners/${org.partnerId}`}>{partnerNames.get(org.partnerId) ?? 'Partner'}</Link></td>}
            <td><StatusBadge status={org.status} /></td>
            <td>{org.type}</td>
            <td>{formatDateTime(org.createdAt)}</td>
          </tr>
        ))}
        {organizations.length === 0 && <tr><td colSpan={partnerNames ? 6 : 5}>No organizations on this page.</td></tr>}
      </tbody>
    </table>
  );
}
