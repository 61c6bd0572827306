// Every site the caller reaches (paginated), with an organization filter, a name search and the page
// size in the address; create in a chosen organization.
import { useState } from 'react';
import { api, call } from '../../api/client';
import { useCan } from '../../session/session';
import { Field } from '../../ui/forms';
import { pageSizeOf, useListQuery } from '../../ui/list-query';
import { PageSizeSelect, Pager, SearchField } from '../../ui/pager';
import { Loadable } from '../../ui/states';
import { useLoad } from '../../ui/use-load';
import { namesById, useAccessibleOrganizations } from './data';
import { NotAvailable, RouteNotice } from './page-notices';
import { SiteForm } from './site-form';
import { SiteTable } from './site-list';
import { useNotice } from '../../ui/notice';

export function SitesPage() {
  const can = useCan();
  if (!can('organizations:read')) {
    return <NotAvailable title="Sites">Sites are not available for your account: it lacks the organizations:read permission.</NotAvailable>;
  }
  return <SiteList canWrite={can('organizations:write')} />;
}

function SiteList({ canWrite }: { canWrite: boolean }) {
  const { page, filters, key, setPage, setFilters } = useListQuery(['orgId', 'search', 'limit']);
  const orgFilter = filters.orgId;
  const { search, limit } = filters;
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useNotice();
  const orgs = useAccessibleOrganizations();
  const orgNames = namesById(orgs.data);
  const list = useLoad(
    () => call(api.GET('/api/v1/orgs/sites', { params: { query: { page, limit: pageSizeOf(limit), ...(orgFilter ? { orgId: orgFilter } : {}), ...(search ? { search } : {}) } } })),
    [key],
  );
  const changed = (message: string) => {
    setNotice(message);
    list.reload();
  };
  const sortedOrgs = orgs.data ? [...orgs.data].sort((a, b) => a.name.localeCompare(b.name)) : undefined;

  return (
    <main id="main" className="page">
      <div className="tenancy-header">
        <h1>Sites</h1>
        {canWrite && !creating && <button type="button" className="primary" onClick={() => { setCreating(true); setNotice(null); }}>New site</button>}
      </div>
      <RouteNotice />
      {notice && <p className="notice" role="status">{notice}</p>}
      {creating && (
        <SiteForm
          key={orgFilter}
          orgId={orgFilter || undefined}
          chooseOrg
          organizations={sortedOrgs}
          onCancel={() => setCreating(false)}
          onDone={(site) => { setCreating(false); changed(`Site ${site.name} created.`); }}
        />
      )}
      <div className="filters" role="search" aria-label="Filter sites">
        <Field label="Show sites of" hint={orgs.error ? `Organizations could not be loaded: ${orgs.error.message}` : undefined}>
          <select value={orgFilter} onChange={(e) => setFilters({ orgId: e.target.value })}>
            <option value="">All organizations</option>
            {sortedOrgs?.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
            {orgFilter && orgs.data && !orgNames.has(orgFilter) && <option value={orgFilter}>Organization {orgFilter}</option>}
          </select>
        </Field>
        <SearchField label="Search name" value={search} onSearch={(v) => setFilters({ search: v })} />
        <PageSizeSelect value={limit} onChange={(v) => setFilters({ limit: v })} />
      </div>
      <Loadable
        state={list}
        isEmpty={(body) => body.data.length === 0 && page === 1}
        empty={search ? `No site name contains “${search}”.` : orgFilter ? 'This organization has no sites, or it is not one you can reach.' : 'No sites yet.'}
      >
        {(body) => (
          <>
            <SiteTable sites={body.data} orgNames={orgNames} canWrite={canWrite} onChanged={changed} />
            <Pager list={body} onPage={setPage} label="Site pages" />
          </>
        )}
      </Loadable>
    </main>
  );
}
