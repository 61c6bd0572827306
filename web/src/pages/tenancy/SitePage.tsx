// One site: details, edit and delete (permanent), and its devices (paginated, page in the address as
// `devicesPage`). Its organization is read for its name and status.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime } from '../../ui/format';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useAction, useLoad } from '../../ui/use-load';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { StatusBadge } from '../../ui/status-badge';
import { Empty } from '../../ui/states';
import { NotAvailable, RouteNotice } from './page-notices';
import type { Site } from './resources';
import { loadOrganization } from './OrganizationPage';
import { SiteForm, addressText } from './site-form';
import { useNotice } from '../../ui/notice';

export function SitePage() {
  const can = useCan();
  const { siteId = '' } = useParams();
  if (!can('organizations:read')) {
    return <NotAvailable title="Site">Sites are not available for your account: it lacks the organizations:read permission.</NotAvailable>;
  }
  return <SiteDetails key={siteId} siteId={siteId} canWrite={can('organizations:write')} canSeeDevices={can('devices:read')} />;
}

function SiteDetails({ siteId, canWrite, canSeeDevices }: { siteId: string; canWrite: boolean; canSeeDevices: boolean }) {
  const user = useUser();
  const navigate = useNavigate();
  const loaded = useLoad(() => call(api.GET('/api/v1/orgs/sites/{id}', { params: { path: { id: siteId } } })), [siteId]);
  const orgId = loaded.data?.orgId;
  const org = useLoad(async () => (orgId ? loadOrganization(user.scope, orgId).catch(() => null) : null), [orgId, user.scope]);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useNotice();
  const remove = useAction(async (site: Site) => {
    await call(api.DELETE('/api/v1/orgs/sites/{id}', { params: { path: { id: site.id } } }));
    navigate(`/organizations/${site.orgId}`, { state: { notice: `Site ${site.name} deleted.` } });
  });

  return (
    <main id="main" className="page">
      <p><Link to="/sites">← Sites</Link></p>
      {loaded.error && <h1>Site</h1>}
      <Loadable state={loaded}>
        {(site) => (
          <>
            <div className="tenancy-header">
              <h1>{site.name}</h1>
              {canWrite && !editing && (
                <div className="actions">
                  <button type="button" onClick={() => { setEditing(true); setSaved(null); }}>Edit site</button>
                  <ConfirmButton
                    label="Delete site"
                    question={<>Delete the site <strong>{site.name}</strong> permanently? This cannot be undone.</>}
                    onConfirm={() => remove.run(site)}
                    disabled={remove.pending}
                  />
                </div>
              )}
            </div>
            <RouteNotice />
            {org.data?.status === 'suspended' && (
              <p className="warning" role="note">
                The organization {org.data.name} is suspended: its users can read this site but cannot change it.
              </p>
            )}
            {saved && <p className="notice" role="status">{saved}</p>}
            <ErrorMessage error={remove.error} />
            {editing ? (
              <SiteForm
                site={site}
                onCancel={() => setEditing(false)}
                onDone={(updated) => { setEditing(false); setSaved(`Site ${updated.name} saved.`); loaded.reload(); }}
              />
            ) : (
              <section className="panel" aria-label="Site details">
                <dl className="props">
                  <dt>Name</dt><dd>{site.name}</dd>
                  <dt>Organization</dt><dd><Link to={`/organizations/${site.orgId}`}>{org.data?.name ?? site.orgId}</Link></dd>
                  <dt>Timezone</dt><dd>{site.timezone}</dd>
                  <dt>Address</dt><dd>{addressText(site.address)}</dd>
                  {site.contact && Object.keys(site.contact).length > 0 && (
                    <><dt>Contact</dt><dd>{addressText(site.contact)}</dd></>
                  )}
                  <dt>Created</dt><dd>{formatDateTime(site.createdAt)}</dd>
                  <dt>Updated</dt><dd>{formatDateTime(site.updatedAt)}</dd>
                  <dt>ID</dt><dd><code>{site.id}</code></dd>
                </dl>
              </section>
            )}
            {canSeeDevices && <SiteDevices siteId={site.id} />}
          </>
        )}
      </Loadable>
    </main>
  );
}

/** The site's devices, newest enrolled first (GET /devices?siteId=…), each a link to its page. */
function SiteDevices({ siteId }: { siteId: string }) {
  const query = useListQuery([], 'devicesPage');
  const devices = useLoad(
    () => call(api.GET('/api/v1/devices', { params: { query: { siteId, page: query.page, limit: PAGE_SIZE } } })),
    [siteId, query.key],
  );
  return (
    <section className="tenancy-section" aria-labelledby="site-devices-title">
      <h2 id="site-devices-title">Devices</h2>
      <Loadable state={devices} isEmpty={(body) => body.data.length === 0 && query.page === 1} empty="No devices at this site.">
        {(body) => (
          body.data.length === 0 ? <Empty>No devices on this page.</Empty> : (
            <>
              <table aria-label="Devices at this site">
                <thead>
                  <tr><th scope="col">Hostname</th><th scope="col">Status</th><th scope="col">Last seen</th></tr>
                </thead>
                <tbody>
                  {body.data.map((d) => (
                    <tr key={d.id}>
                      <td><Link to={`/devices/${d.id}`}>{d.hostname}</Link></td>
                      <td><StatusBadge status={d.status} /></td>
                      <td>{d.lastSeenAt ? formatDateTime(d.lastSeenAt) : 'never'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager list={body} onPage={query.setPage} label="Device pages" />
            </>
          )
        )}
      </Loadable>
    </section>
  );
}
