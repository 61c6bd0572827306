// One organization: details, edit and delete (partner and system scope), and its sites (every scope;
// create, edit and delete with organizations:write).
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, call, ApiError } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime, formatDay } from '../../ui/format';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useAction, useLoad } from '../../ui/use-load';
import { loadOrganizations } from '../../api/directory';
import { NotAvailable, RouteNotice } from './page-notices';
import type { Organization } from './resources';
import { OrganizationForm } from './organization-form';
import { SiteForm } from './site-form';
import { SsoSettings } from './sso-settings';
import { SiteTable } from './site-list';
import { useNotice } from '../../ui/notice';

/** One organization the caller reaches: organization scope reads it from GET /orgs (its only read). */
export async function loadOrganization(scope: string, id: string): Promise<Organization> {
  if (scope !== 'organization') return call(api.GET('/api/v1/orgs/organizations/{id}', { params: { path: { id } } }));
  const found = (await loadOrganizations()).find((o) => o.id === id);
  if (!found) throw new ApiError(404, 'NOT_FOUND', 'Organization not found, or not one your account can reach.');
  return found;
}

export function OrganizationPage() {
  const can = useCan();
  const { orgId = '' } = useParams();
  if (!can('organizations:read')) {
    return <NotAvailable title="Organization">Organizations are not available for your account: it lacks the organizations:read permission.</NotAvailable>;
  }
  return <OrganizationDetails key={orgId} orgId={orgId} />;
}

function OrganizationDetails({ orgId }: { orgId: string }) {
  const user = useUser();
  const can = useCan();
  const navigate = useNavigate();
  const canWrite = can('organizations:write');
  const canManageOrg = canWrite && user.scope !== 'organization';
  const loaded = useLoad(() => loadOrganization(user.scope, orgId), [orgId, user.scope]);
  const partner = useLoad(
    async () => (user.scope === 'system' && loaded.data ? call(api.GET('/api/v1/orgs/partners/{id}', { params: { path: { id: loaded.data.partnerId } } })) : null),
    [user.scope, loaded.data?.partnerId],
  );
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useNotice();
  const remove = useAction(async (org: Organization) => {
    await call(api.DELETE('/api/v1/orgs/organizations/{id}', { params: { path: { id: org.id } } }));
    navigate('/organizations', { state: { notice: `Organization ${org.name} deleted.` } });
  });

  return (
    <main id="main" className="page">
      <p><Link to="/organizations">← Organizations</Link></p>
      {loaded.error && <h1>Organization</h1>}
      <Loadable state={loaded}>
        {(org) => (
          <>
            <div className="tenancy-header">
              <h1>{org.name}</h1>
              {canManageOrg && !editing && (
                <div className="actions">
                  <button type="button" onClick={() => { setEditing(true); setSaved(null); }}>Edit organization</button>
                  <ConfirmButton
                    label="Delete organization"
                    question={<>Delete the organization <strong>{org.name}</strong>? It disappears from every list and can no longer be reached; its sites are kept but become unreachable.</>}
                    onConfirm={() => remove.run(org)}
                    disabled={remove.pending}
                  />
                </div>
              )}
            </div>
            <RouteNotice />
            {org.status === 'suspended' && (
              <p className="warning" role="note">
                This organization is suspended: its users can read its data but cannot change anything (their changes are refused).
                {user.scope !== 'organization' && ' Set its status back to active to lift this.'}
              </p>
            )}
            {saved && <p className="notice" role="status">{saved}</p>}
            <ErrorMessage error={remove.error} />
            {editing ? (
              <OrganizationForm
                organization={org}
                onCancel={() => setEditing(false)}
                onDone={(updated) => { setEditing(false); setSaved(`Organization ${updated.name} saved.`); loaded.reload(); }}
              />
            ) : (
              <section className="panel" aria-label="Organization details">
                <dl className="props">
                  <dt>Name</dt><dd>{org.name}</dd>
                  <dt>Slug</dt><dd><code>{org.slug}</code></dd>
                  {user.scope === 'system' && (
                    <><dt>Partner</dt><dd><Link to={`/partners/${org.partnerId}`}>{partner.data?.name ?? org.partnerId}</Link></dd></>
                  )}
                  <dt>Status</dt><dd><StatusBadge status={org.status} /></dd>
                  <dt>Type</dt><dd>{org.type}</dd>
                  <dt>Maximum devices</dt><dd>{org.maxDevices ?? 'No limit'}</dd>
                  <dt>Contract start</dt><dd>{formatDay(org.contractStart)}</dd>
                  <dt>Contract end</dt><dd>{formatDay(org.contractEnd)}</dd>
                  <dt>Created</dt><dd>{formatDateTime(org.createdAt)}</dd>
                  <dt>Updated</dt><dd>{formatDateTime(org.updatedAt)}</dd>
                  <dt>ID</dt><dd><code>{org.id}</code></dd>
                </dl>
              </section>
            )}
            <SsoSettings
              tenant="organization"
              name={org.name}
              config={org.ssoConfig}
              writable={canManageOrg}
              save={(ssoConfig) => call(api.PATCH('/api/v1/orgs/organizations/{id}', { params: { path: { id: org.id } }, body: { ssoConfig } }))}
              onChanged={loaded.reload}
            />
            <OrganizationSites org={org} canWrite={canWrite} />
          </>
        )}
      </Loadable>
    </main>
  );
}

function OrganizationSites({ org, canWrite }: { org: Organization; canWrite: boolean }) {
  const { page, key, setPage } = useListQuery([], 'sitesPage');
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useNotice();
  const list = useLoad(
    () => call(api.GET('/api/v1/orgs/sites', { params: { query: { orgId: org.id, page, limit: PAGE_SIZE } } })),
    [org.id, key],
  );
  const changed = (message: string) => {
    setNotice(message);
    list.reload();
  };
  return (
    <section className="tenancy-section" aria-labelledby="org-sites-title">
      <div className="tenancy-header">
        <h2 id="org-sites-title">Sites</h2>
        {canWrite && !creating && <button type="button" onClick={() => { setCreating(true); setNotice(null); }}>New site</button>}
      </div>
      {notice && <p className="notice" role="status">{notice}</p>}
      {creating && (
        <SiteForm
          orgId={org.id}
          onCancel={() => setCreating(false)}
          onDone={(site) => { setCreating(false); changed(`Site ${site.name} created.`); }}
        />
      )}
      <Loadable state={list} isEmpty={(body) => body.data.length === 0 && page === 1} empty="This organization has no sites yet.">
        {(body) => (
          <>
            <SiteTable sites={body.data} canWrite={canWrite} onChanged={changed} />
            <Pager list={body} onPage={setPage} label="Site pages" />
          </>
        )}
      </Loadable>
    </section>
  );
}
