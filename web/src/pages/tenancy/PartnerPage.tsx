// One partner (system scope): details, edit, soft delete, and its organizations.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime } from '../../ui/format';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useAction, useLoad } from '../../ui/use-load';
import { NotAvailable, RouteNotice } from './page-notices';
import type { Partner } from './resources';
import { OrganizationForm } from './organization-form';
import { OrganizationOrder } from './organization-order';
import { OrganizationTable } from './OrganizationsPage';
import { PartnerForm } from './partner-form';
import { OwnPartnerPage } from './own-partner';
import { SsoSettings } from './sso-settings';
import { useNotice } from '../../ui/notice';

export function PartnerPage() {
  const user = useUser();
  const can = useCan();
  const { partnerId = '' } = useParams();
  // A partner user's own partner: its single sign-on settings (PATCH /orgs/partners/me).
  if (user.scope === 'partner' && partnerId === user.partnerId && can('organizations:read')) return <OwnPartnerPage />;
  if (user.scope !== 'system' || !can('organizations:read')) {
    return (
      <NotAvailable title="Partner">
        Partners are not available for your account: only system administrators manage partners.
      </NotAvailable>
    );
  }
  return <PartnerDetails key={partnerId} partnerId={partnerId} canWrite={can('organizations:write')} />;
}

function PartnerDetails({ partnerId, canWrite }: { partnerId: string; canWrite: boolean }) {
  const navigate = useNavigate();
  const loaded = useLoad(() => call(api.GET('/api/v1/orgs/partners/{id}', { params: { path: { id: partnerId } } })), [partnerId]);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useNotice();
  const remove = useAction(async (partner: Partner) => {
    await call(api.DELETE('/api/v1/orgs/partners/{id}', { params: { path: { id: partner.id } } }));
    navigate('/partners', { state: { notice: `Partner ${partner.name} deleted.` } });
  });

  return (
    <main id="main" className="page">
      <p><Link to="/partners">← Partners</Link></p>
      {loaded.error && <h1>Partner</h1>}
      <Loadable state={loaded}>
        {(partner) => (
          <>
            <div className="tenancy-header">
              <h1>{partner.name}</h1>
              {canWrite && !editing && (
                <div className="actions">
                  <button type="button" onClick={() => { setEditing(true); setSaved(null); }}>Edit partner</button>
                  <ConfirmButton
                    label="Delete partner"
                    question={<>Delete the partner <strong>{partner.name}</strong>? It disappears from every list, and its users are refused at once. Its organizations can no longer be reached.</>}
                    onConfirm={() => remove.run(partner)}
                    disabled={remove.pending}
                  />
                </div>
              )}
            </div>
            <RouteNotice />
            {saved && <p className="notice" role="status">{saved}</p>}
            <ErrorMessage error={remove.error} />
            {editing ? (
              <PartnerForm
                partner={partner}
                onCancel={() => setEditing(false)}
                onDone={(updated) => { setEditing(false); setSaved(`Partner ${updated.name} saved.`); loaded.reload(); }}
              />
            ) : (
              <PartnerProps partner={partner} />
            )}
            <SsoSettings
              tenant="partner"
              name={partner.name}
              config={partner.ssoConfig}
              writable={canWrite}
              save={(ssoConfig) => call(api.PATCH('/api/v1/orgs/partners/{id}', { params: { path: { id: partner.id } }, body: { ssoConfig } }))}
              onChanged={loaded.reload}
            />
            <PartnerOrganizations partner={partner} canWrite={canWrite} />
          </>
        )}
      </Loadable>
    </main>
  );
}

function PartnerProps({ partner }: { partner: Partner }) {
  return (
    <section className="panel" aria-label="Partner details">
      <dl className="props">
        <dt>Name</dt><dd>{partner.name}</dd>
        <dt>Slug</dt><dd><code>{partner.slug}</code></dd>
        <dt>Status</dt><dd><StatusBadge status={partner.status} /></dd>
        <dt>Type</dt><dd>{partner.type}</dd>
        <dt>Plan</dt><dd>{partner.plan}</dd>
        <dt>Billing e-mail</dt><dd>{partner.billingEmail ?? '—'}</dd>
        <dt>Maximum organizations</dt><dd>{partner.maxOrganizations ?? 'No limit'}</dd>
        <dt>Maximum devices</dt><dd>{partner.maxDevices ?? 'No limit'}</dd>
        <dt>Created</dt><dd>{formatDateTime(partner.createdAt)}</dd>
        <dt>Updated</dt><dd>{formatDateTime(partner.updatedAt)}</dd>
        <dt>ID</dt><dd><code>{partner.id}</code></dd>
      </dl>
    </section>
  );
}

function PartnerOrganizations({ partner, canWrite }: { partner: Partner; canWrite: boolean }) {
  const navigate = useNavigate();
  const { page, key, setPage } = useListQuery([], 'orgsPage');
  const [creating, setCreating] = useState(false);
  const [ordering, setOrdering] = useState(false);
  const list = useLoad(
    () => call(api.GET('/api/v1/orgs/organizations', { params: { query: { partnerId: partner.id, page, limit: PAGE_SIZE } } })),
    [partner.id, key],
  );
  return (
    <section className="tenancy-section" aria-labelledby="partner-orgs-title">
      <div className="tenancy-header">
        <h2 id="partner-orgs-title">Organizations of {partner.name}</h2>
        {canWrite && (
          <div className="actions">
            <button type="button" aria-expanded={ordering} onClick={() => setOrdering((v) => !v)}>
              {ordering ? 'Close display order' : 'Change display order'}
            </button>
            {!creating && <button type="button" onClick={() => setCreating(true)}>New organization</button>}
          </div>
        )}
      </div>
      {ordering && <OrganizationOrder partnerId={partner.id} onSaved={list.reload} />}
      {creating && (
        <OrganizationForm
          choosePartner
          partners={[partner]}
          partnerId={partner.id}
          onCancel={() => setCreating(false)}
          onDone={(org) => navigate(`/organizations/${org.id}`, { state: { notice: `Organization ${org.name} created.` } })}
        />
      )}
      <Loadable state={list} isEmpty={(body) => body.data.length === 0 && page === 1} empty="This partner has no organizations yet.">
        {(body) => (
          <>
            <OrganizationTable organizations={body.data} />
            <Pager list={body} onPage={setPage} label="Organization pages" />
          </>
        )}
      </Loadable>
    </section>
  );
}
