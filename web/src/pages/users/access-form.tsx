// Changing what a user may do: its role, and for a partner user its organization access (PATCH
// /users/:id role, orgAccess, orgIds). Only what changed is sent; the service audits it as a
// permission change.
import { useRef, useState } from 'react';
import { api, call } from '../../api/client';
import { useUser } from '../../session/session';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { AccessFields, RoleField } from './access-fields';
import { grantableAccess, orgName, grantableRoles, orgsOfPartner, type OrgAccess, type Role, type UpdateBody, type User, type UserDirectory } from './user';

export function AccessForm({ target, directory, onSaved }: { target: User; directory: UserDirectory; onSaved: (message: string) => void }) {
  const me = useUser();
  const form = useRef<HTMLFormElement>(null);
  const roles = grantableRoles(me);
  const options = grantableAccess(me, directory);
  const [role, setRole] = useState<Role>(target.role);
  const [access, setAccess] = useState<OrgAccess>(target.orgAccess ?? 'none');
  const [orgIds, setOrgIds] = useState<string[]>(target.orgIds);
  const [problem, setProblem] = useState<string | null>(null);
  const [unchanged, setUnchanged] = useState(false);
  const save = useAction(async (body: UpdateBody) => call(api.PATCH('/api/v1/users/{id}', { params: { path: { id: target.id } }, body })));
  const partner = target.scope === 'partner';

  const submit = async () => {
    setUnchanged(false);
    setProblem(null);
    const body: UpdateBody = {};
    if (role !== target.role) body.role = role;
    if (partner) {
      if (access === 'selected' && orgIds.length === 0) {
        setProblem('Check at least one organization, or choose no organization.');
        requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('input[type=checkbox]')?.focus());
        return;
      }
      const sameIds = orgIds.length === target.orgIds.length && orgIds.every((id) => target.orgIds.includes(id));
      if (access !== target.orgAccess) body.orgAccess = access;
      if (access === 'selected' && (!sameIds || body.orgAccess)) body.orgIds = orgIds;
    }
    if (Object.keys(body).length === 0) return setUnchanged(true);
    const saved = await save.run(body);
    if (!saved) return;
    const reach = saved.orgAccess === 'all' ? 'every organization of the partner'
      : saved.orgAccess === 'selected' && saved.orgIds.length > 0 ? saved.orgIds.map((id) => orgName(directory, id)).join(', ') : 'no organization';
    const parts = [body.role ? `the role ${saved.role}` : null, body.orgAccess || body.orgIds ? `access to ${reach}` : null].filter(Boolean);
    onSaved(`Saved: ${saved.name} now has ${parts.join(' and ')}.`);
  };

  return (
    <form ref={form} className="panel users-form" noValidate aria-labelledby="access-title" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
      <h2 id="access-title">Role{partner ? ' and organization access' : ''}</h2>
      <RoleField value={role} roles={roles.includes(target.role) ? roles : [target.role, ...roles]} onChange={setRole} error={save.error?.forField('role')} />
      {partner && (
        <AccessFields
          access={access} options={options} onAccess={setAccess} orgIds={orgIds} onOrgIds={setOrgIds}
          orgs={orgsOfPartner(directory, target.partnerId)} error={problem ?? save.error?.forField('orgIds')}
        />
      )}
      {unchanged && <p className="hint" role="status">Nothing changed: there is nothing to save.</p>}
      <ErrorMessage error={save.error} />
      <div className="actions">
        <button type="submit" className="primary" aria-label={`Save role${partner ? ' and access' : ''} of ${target.name}`} disabled={save.pending}>
          {save.pending ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}
