// One user: where it belongs and what it may do, its role and (partner users) organization access,
// disable / enable (a disabled user cannot sign in and its sessions end at once), and delete.
import { Link, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime } from '../../ui/format';
import { ErrorMessage, Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useAction, useLoad } from '../../ui/use-load';
import { Gated, WriteGateNote, type WriteGate } from '../../ui/write-gate';
import { NotAvailable } from '../tenancy/page-notices';
import { AccessForm } from './access-form';
import { Notice, PageHeading, WhereLinks, useUserDirectory, useUsersGate } from './parts';
import { SCOPE_LABELS, accessSummary, orgName, whyNotManageable, type User, type UserDirectory } from './user';
import { useNotice } from '../../ui/notice';

export function UserPage() {
  const can = useCan();
  const { userId = '' } = useParams();
  if (!can('users:read')) {
    return <NotAvailable title="User">Users are not available for your account: it lacks the users:read permission (admins have it).</NotAvailable>;
  }
  return <UserDetails key={userId} id={userId} />;
}

function UserDetails({ id }: { id: string }) {
  const loaded = useLoad(() => call(api.GET('/api/v1/users/{id}', { params: { path: { id } } })), [id]);
  const directory = useUserDirectory();
  const gate = useUsersGate();
  return (
    <main id="main" className="page users">
      <p><Link to="/users">← Users</Link></p>
      {loaded.error && !loaded.data && <PageHeading>User</PageHeading>}
      <Loadable state={loaded}>
        {(u) => <UserView target={u} directory={directory.data} gate={gate} reload={loaded.reload} />}
      </Loadable>
    </main>
  );
}

function UserView({ target: u, directory, gate, reload }: { target: User; directory: UserDirectory | undefined; gate: WriteGate; reload: () => void }) {
  const me = useUser();
  const navigate = useNavigate();
  const [done, setDone] = useNotice();
  const notManageable = whyNotManageable(me, directory, u);
  const allowed = gate.allowed && !notManageable;
  const act = useAction(async (run: () => Promise<string>) => {
    setDone(null);
    setDone(await run());
    reload();
  });
  const toggle = () => act.run(async () => {
    const saved = await call(api.PATCH('/api/v1/users/{id}', { params: { path: { id: u.id } }, body: { disabled: !u.disabled } }));
    return saved.disabled
      ? `${u.name} is disabled: they cannot sign in, and their sessions have ended.`
      : `${u.name} is enabled: they can sign in again.`;
  });
  const remove = () => act.run(async () => {
    await call(api.DELETE('/api/v1/users/{id}', { params: { path: { id: u.id } } }));
    void navigate('/users', { state: { notice: `User ${u.name} (${u.email}) deleted.` } });
    return '';
  });

  return (
    <>
      <div className="users-heading">
        <PageHeading>{u.name}</PageHeading>
        <div className="actions">
          <Gated allowed={allowed} label={u.disabled ? 'Enable' : 'Disable'}>
            <button type="button" aria-label={`${u.disabled ? 'Enable' : 'Disable'} ${u.name}`} disabled={act.pending} onClick={() => void toggle()}>
              {u.disabled ? 'Enable' : 'Disable'}
            </button>
          </Gated>
          <Gated allowed={allowed} label="Delete">
            <ConfirmButton
              label="Delete" name={`Delete ${u.name}`} confirmLabel="Delete the user" disabled={act.pending}
              question={<>Delete the user {u.name} ({u.email})? They are signed out at once and can no longer sign in; the audit log keeps what they did. This cannot be undone.</>}
              onConfirm={remove}
            />
          </Gated>
        </div>
      </div>
      <WriteGateNote gate={gate} />
      {gate.allowed && notManageable && <p className="notice" id="write-gate-reason" role="note">{notManageable}{u.id === me.id && <> <Link to="/account">My account</Link></>}</p>}
      <ErrorMessage error={act.error} />
      <Notice message={done || null} />

      <section className="panel users-section" aria-labelledby="user-details-title">
        <h2 id="user-details-title">Details</h2>
        <dl className="props users-props">
          <dt>E-mail</dt><dd>{u.email}</dd>
          <dt>Status</dt><dd><StatusBadge status={u.disabled ? 'disabled' : 'active'} /></dd>
          <dt>Role</dt><dd>{u.role}</dd>
          <dt>Scope</dt><dd>{SCOPE_LABELS[u.scope]}</dd>
          <dt>Belongs to</dt><dd><WhereLinks item={u} directory={directory} /></dd>
          {u.scope === 'partner' && <><dt>Reaches</dt><dd><Reaches user={u} directory={directory} /></dd></>}
          <dt>MFA</dt><dd>{u.mfaEnabled ? 'on' : 'off'}</dd>
          <dt>Last sign-in</dt><dd>{u.lastLoginAt ? formatDateTime(u.lastLoginAt) : 'never'}</dd>
          <dt>Created</dt><dd>{formatDateTime(u.createdAt)}</dd>
          <dt>Changed</dt><dd>{formatDateTime(u.updatedAt)}</dd>
        </dl>
      </section>

      {allowed && directory && (
        <AccessForm key={u.updatedAt} target={u} directory={directory} onSaved={(saved) => { setDone(saved); reload(); }} />
      )}
    </>
  );
}

/** A partner user's organizations, each linked to its page; else what its access amounts to. */
function Reaches({ user: u, directory }: { user: User; directory: UserDirectory | undefined }) {
  if (u.orgAccess !== 'selected' || u.orgIds.length === 0) return <>{accessSummary(u, directory)}</>;
  return (
    <>
      {u.orgIds.map((id, i) => (
        <span key={id}>{i > 0 && ', '}<Link to={`/organizations/${id}`}>{orgName(directory, id)}</Link></span>
      ))}
    </>
  );
}
