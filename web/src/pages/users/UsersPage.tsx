// Users (API.md §3, §10): the users within the signed-in admin's reach, filtered by where they belong,
// inviting new ones (no one types a password for someone else), and the invitations not accepted yet.
import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { formatDateTime } from '../../ui/format';
import { Field } from '../../ui/forms';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad } from '../../ui/use-load';
import { Gated, WriteGateNote } from '../../ui/write-gate';
import { NotAvailable, RouteNotice } from '../tenancy/page-notices';
import { InviteForm } from './invite-form';
import { PendingInvitations } from './invitations';
import { PageHeading, TableScroll, WhereLinks, useUserDirectory, useUsersGate } from './parts';
import { SCOPE_LABELS, type Scope, type UserDirectory } from './user';
import { useNotice } from '../../ui/notice';

export function UsersPage() {
  const can = useCan();
  if (!can('users:read')) {
    return <NotAvailable title="Users">Users are not available for your account: it lacks the users:read permission (admins have it).</NotAvailable>;
  }
  return <UserList />;
}

function UserList() {
  const user = useUser();
  const query = useListQuery(['scope', 'orgId', 'partnerId']);
  const { scope, orgId, partnerId } = query.filters;
  const list = useLoad(() => call(api.GET('/api/v1/users', {
    params: { query: { page: query.page, limit: PAGE_SIZE, scope: (scope || undefined) as Scope | undefined, orgId: orgId || undefined, partnerId: partnerId || undefined } },
  })), [query.key]);
  const directory = useUserDirectory();
  const gate = useUsersGate();
  const [inviting, setInviting] = useState(false);
  const [invited, setInvited] = useNotice();
  const [invitations, setInvitations] = useState(0);
  const inviteButton = useRef<HTMLButtonElement>(null);
  const filtered = Boolean(scope || orgId || partnerId);

  return (
    <main id="main" className="page users">
      <PageHeading>Users</PageHeading>
      <p>
        {user.scope === 'organization' && 'The people who sign in to your organization.'}
        {user.scope === 'partner' && 'The people who sign in to your partner and to the organizations you reach.'}
        {user.scope === 'system' && 'The people who sign in to the platform, its partners and their organizations.'}{' '}
        New people are invited by e-mail and set their own password.
      </p>
      <RouteNotice />
      <WriteGateNote gate={gate} />
      <ErrorMessage error={directory.error} onRetry={directory.reload} />

      {inviting && directory.data ? (
        <InviteForm
          directory={directory.data}
          onInvited={(inv) => {
            setInviting(false);
            setInvited(`Invitation sent to ${inv.email}. The link in it works until ${formatDateTime(inv.expiresAt)}.`);
            setInvitations((n) => n + 1);
          }}
          onCancel={() => { setInviting(false); requestAnimationFrame(() => inviteButton.current?.focus()); }}
        />
      ) : (
        <div className="actions users-new">
          <Gated allowed={gate.allowed} label="Invite user">
            <button ref={inviteButton} type="button" className="primary" disabled={!directory.data} onClick={() => setInviting(true)}>Invite user</button>
          </Gated>
        </div>
      )}

      {user.scope !== 'organization' && directory.data && (
        <UserFilters directory={directory.data} scope={scope} orgId={orgId} partnerId={partnerId} onChange={query.setFilters} />
      )}

      <Loadable state={list} isEmpty={(body) => body.data.length === 0} empty={filtered ? 'No user matches this filter.' : 'No users yet.'}>
        {(body) => (
          <>
            <TableScroll label="Users table">
              <table className="users-table" aria-busy={list.loading}>
                <caption className="hint">Users, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">E-mail</th>
                    <th scope="col">Role</th>
                    <th scope="col">Belongs to</th>
                    <th scope="col">MFA</th>
                    <th scope="col">Status</th>
                    <th scope="col">Last sign-in</th>
                  </tr>
                </thead>
                <tbody>
                  {body.data.map((u) => (
                    <tr key={u.id}>
                      <th scope="row"><Link to={`/users/${u.id}`}>{u.name}</Link>{u.id === user.id && <span className="hint"> (you)</span>}</th>
                      <td>{u.email}</td>
                      <td>{u.role}</td>
                      <td><WhereLinks item={u} directory={directory.data} /></td>
                      <td>{u.mfaEnabled ? 'on' : 'off'}</td>
                      <td><StatusBadge status={u.disabled ? 'disabled' : 'active'} /></td>
                      <td>{u.lastLoginAt ? formatDateTime(u.lastLoginAt) : 'never'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager list={body} onPage={query.setPage} label="User pages" />
          </>
        )}
      </Loadable>

      <PendingInvitations directory={directory.data} gate={gate} refreshKey={invitations} invited={invited} />
    </main>
  );
}

/** Where the listed users belong: a scope, an organization, a partner (system scope), as GET /users filters. */
function UserFilters({ directory, scope, orgId, partnerId, onChange }: {
  directory: UserDirectory;
  scope: string;
  orgId: string;
  partnerId: string;
  onChange: (patch: Partial<Record<'scope' | 'orgId' | 'partnerId', string>>) => void;
}) {
  const user = useUser();
  const scopes: Scope[] = user.scope === 'system' ? ['system', 'partner', 'organization'] : ['partner', 'organization'];
  return (
    <form className="filters" aria-label="Filter users" onSubmit={(e) => e.preventDefault()}>
      <Field label="Belongs to">
        <select value={scope} onChange={(e) => onChange({ scope: e.target.value })}>
          <option value="">Any</option>
          {scopes.map((s) => <option key={s} value={s}>{SCOPE_LABELS[s]}</option>)}
        </select>
      </Field>
      {user.scope === 'system' && (
        <Field label="Partner">
          <select value={partnerId} onChange={(e) => onChange({ partnerId: e.target.value })}>
            <option value="">All partners</option>
            {directory.partners.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </Field>
      )}
      {(directory.orgs.length > 1 || orgId) && (
        <Field label="Organization" hint="Users of that organization; partner users are listed under their partner.">
          <select value={orgId} onChange={(e) => onChange({ orgId: e.target.value })}>
            <option value="">All organizations</option>
            {directory.orgs.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
          </select>
        </Field>
      )}
    </form>
  );
}
