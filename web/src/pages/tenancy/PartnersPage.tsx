// Partners (system scope only): the paginated list and the create form.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { formatDateTime } from '../../ui/format';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad } from '../../ui/use-load';
import { NotAvailable, RouteNotice } from './page-notices';
import { PartnerForm } from './partner-form';

export function PartnersPage() {
  const user = useUser();
  const can = useCan();
  if (user.scope !== 'system' || !can('organizations:read')) {
    return (
      <NotAvailable title="Partners">
        Partners are not available for your account: only system administrators manage partners.
      </NotAvailable>
    );
  }
  return <PartnerList canWrite={can('organizations:write')} />;
}

function PartnerList({ canWrite }: { canWrite: boolean }) {
  const navigate = useNavigate();
  const { page, key, setPage } = useListQuery([]);
  const [creating, setCreating] = useState(false);
  const list = useLoad(() => call(api.GET('/api/v1/orgs/partners', { params: { query: { page, limit: PAGE_SIZE } } })), [key]);

  return (
    <main id="main" className="page">
      <div className="tenancy-header">
        <h1>Partners</h1>
        {canWrite && !creating && <button type="button" className="primary" onClick={() => setCreating(true)}>New partner</button>}
      </div>
      <RouteNotice />
      {creating && (
        <PartnerForm
          onCancel={() => setCreating(false)}
          onDone={(partner) => navigate(`/partners/${partner.id}`, { state: { notice: `Partner ${partner.name} created.` } })}
        />
      )}
      <Loadable state={list} isEmpty={(body) => body.data.length === 0 && page === 1} empty="No partners yet.">
        {(body) => (
          <>
            <table aria-label="Partners">
              <thead>
                <tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Status</th><th scope="col">Type</th><th scope="col">Plan</th><th scope="col">Created</th></tr>
              </thead>
              <tbody>
                {body.data.map((partner) => (
                  <tr key={partner.id}>
                    <td><Link to={`/partners/${partner.id}`}>{partner.name}</Link></td>
                    <td><code>{partner.slug}</code></td>
                    <td><StatusBadge status={partner.status} /></td>
                    <td>{partner.type}</td>
                    <td>{partner.plan}</td>
                    <td>{formatDateTime(partner.createdAt)}</td>
                  </tr>
                ))}
                {body.data.length === 0 && <tr><td colSpan={6}>No partners on this page.</td></tr>}
              </tbody>
            </table>
            <Pager list={body} onPage={setPage} label="Partner pages" />
          </>
        )}
      </Loadable>
    </main>
  );
}
