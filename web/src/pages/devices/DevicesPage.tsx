// The device list: GET /devices with the organization, site and status filters, the hostname search
// and the page size, all kept in the address.
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { Field } from '../../ui/forms';
import { pageSizeOf, useListQuery } from '../../ui/list-query';
import { PageSizeSelect, Pager, SearchField } from '../../ui/pager';
import { RouteNotice } from '../tenancy/page-notices';
import { ErrorMessage, Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad, usePolling } from '../../ui/use-load';
import { loadOrganizations, loadSitesOf, loadSitesOfMany } from '../../api/directory';
import { DEVICE_STATUSES, type Device } from './device';
import { InvalidFilters, oneOf } from './filter-form';
import { NoDeviceAccess, osLabel } from './DeviceOverview';
import { useCan } from '../../session/session';

const STATUS_REFRESH_MS = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function DevicesPage() {
  const can = useCan();
  if (!can('devices:read')) return <NoDeviceAccess />;
  return <DeviceList />;
}

function DeviceList() {
  const can = useCan();
  const query = useListQuery(['orgId', 'siteId', 'status', 'search', 'limit']);
  const { orgId, siteId, status, search, limit } = query.filters;
  const invalid = [
    orgId && !UUID.test(orgId) ? 'organization' : '',
    siteId && !UUID.test(siteId) ? 'site' : '',
    status && !oneOf(DEVICE_STATUSES, status) ? 'status' : '',
  ].filter(Boolean);

  const orgs = useLoad(loadOrganizations, []);
  const filterSites = useLoad(async () => (orgId && UUID.test(orgId) ? loadSitesOf(orgId) : []), [orgId]);
  const devices = useLoad(async () => {
    if (invalid.length > 0) return null;
    return call(api.GET('/api/v1/devices', {
      params: { query: { page: query.page, limit: pageSizeOf(limit), orgId: orgId || undefined, siteId: siteId || undefined, status: oneOf(DEVICE_STATUSES, status), search: search || undefined } },
    }));
  }, [query.key]);
  // Devices come online and drop off on their own: keep the page current without a reload.
  usePolling(devices.reload, STATUS_REFRESH_MS);

  // Site names for the page: with an organization chosen, the filter's own list has them all.
  const pageOrgIds = orgId ? '' : [...new Set(devices.data?.data.map((d) => d.orgId) ?? [])].sort().join();
  const pageSites = useLoad(async () => (pageOrgIds ? loadSitesOfMany(pageOrgIds.split(',')) : null), [pageOrgIds]);
  const orgName = (id: string) => orgs.data?.find((o) => o.id === id)?.name ?? id;
  const siteName = (id: string) => (orgId ? filterSites.data?.find((s) => s.id === id) : pageSites.data?.get(id))?.name ?? id;

  return (
    <main id="main" className="page">
      <h1>Devices</h1>
      <p className="hint">Status updates every {STATUS_REFRESH_MS / 1000} seconds.</p>
      <RouteNotice />
      <form className="filters" role="search" aria-label="Filter devices" onSubmit={(e) => e.preventDefault()}>
        <SearchField label="Search hostname" value={search} onSearch={(v) => query.setFilters({ search: v })} />
        <Field label="Organization">
          <select value={orgId} onChange={(e) => query.setFilters({ orgId: e.target.value, siteId: '' })}>
            <option value="">All organizations</option>
            {orgs.data?.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
            {orgId && orgs.data && !orgs.data.some((o) => o.id === orgId) && <option value={orgId}>{orgId}</option>}
          </select>
        </Field>
        <Field label="Site" hint={orgId ? undefined : 'Choose an organization first'}>
          <select value={siteId} disabled={!orgId} onChange={(e) => query.setFilters({ siteId: e.target.value })}>
            <option value="">All sites</option>
            {filterSites.data?.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
            {siteId && filterSites.data && !filterSites.data.some((s) => s.id === siteId) && <option value={siteId}>{siteId}</option>}
          </select>
        </Field>
        <Field label="Status">
          <select value={status} onChange={(e) => query.setFilters({ status: e.target.value })}>
            <option value="">Any status</option>
            {DEVICE_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            {status && !oneOf(DEVICE_STATUSES, status) && <option value={status}>{status}</option>}
          </select>
        </Field>
        <PageSizeSelect value={limit} onChange={(v) => query.setFilters({ limit: v })} />
        {(orgId || siteId || status || search) && (
          <div className="actions"><button type="button" onClick={() => query.setFilters({ orgId: '', siteId: '', status: '', search: '' })}>Clear filters</button></div>
        )}
      </form>
      <ErrorMessage error={orgs.error} onRetry={orgs.reload} />
      <ErrorMessage error={filterSites.error} onRetry={filterSites.reload} />
      {invalid.length > 0 && <InvalidFilters>The address names an unknown {invalid.join(' and ')}: choose the filters again.</InvalidFilters>}
      {invalid.length === 0 && (
        <Loadable state={devices} isEmpty={(page) => !page || page.data.length === 0} empty={orgId || siteId || status || search ? 'No device matches these filters.' : 'No devices yet. Enroll an agent with an enrollment key.'}>
          {(page) => page && (
            <>
              <DeviceTable devices={page.data} orgName={orgName} siteName={siteName} linkTenancy={can('organizations:read')} busy={devices.loading} />
              <Pager list={page} onPage={query.setPage} label="Device pages" />
            </>
          )}
        </Loadable>
      )}
    </main>
  );
}

/** `linkTenancy`: the organization and site names link to their pages (for callers who can read them). */
function DeviceTable({ devices, orgName, siteName, linkTenancy, busy }: {
  devices: Device[];
  orgName: (id: string) => string;
  siteName: (id: string) => string;
  linkTenancy: boolean;
  busy: boolean;
}) {
  return (
    <table aria-busy={busy}>
      <caption className="hint devices-caption">Devices, newest enrolled first</caption>
      <thead>
        <tr><th scope="col">Hostname</th><th scope="col">Status</th><th scope="col">OS</th><th scope="col">Organization</th><th scope="col">Site</th><th scope="col">Last seen</th></tr>
      </thead>
      <tbody>
        {devices.map((d) => (
          <tr key={d.id}>
            <td><Link to={`/devices/${d.id}`}>{d.hostname}</Link></td>
            <td><StatusBadge status={d.status} /></td>
            <td>{osLabel(d)}</td>
            <td>{linkTenancy ? <Link to={`/organizations/${d.orgId}`}>{orgName(d.orgId)}</Link> : orgName(d.orgId)}</td>
            <td>{linkTenancy ? <Link to={`/sites/${d.siteId}`}>{siteName(d.siteId)}</Link> : siteName(d.siteId)}</td>
            <td>{d.lastSeenAt ? formatDateTime(d.lastSeenAt) : 'never'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
