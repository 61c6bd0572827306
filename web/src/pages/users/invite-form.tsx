// Inviting a user (API.md §10): the /users create body without a password. The service mails a link
// (valid 7 days, one use) with which the person sets their own password. The form offers only places
// inside the admin's reach and grants up to its own.
import { useEffect, useRef, useState } from 'react';
import { ApiError, api, call } from '../../api/client';
import { useUser } from '../../session/session';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { AccessFields, RoleField } from './access-fields';
import { SCOPE_LABELS, grantableAccess, grantableRoles, orgsOfPartner, type Invitation, type InviteBody, type OrgAccess, type Role, type Scope, type UserDirectory } from './user';

type FieldName = 'email' | 'name' | 'partnerId' | 'orgId' | 'orgIds';

export function InviteForm({ directory, onInvited, onCancel }: { directory: UserDirectory; onInvited: (invitation: Invitation) => void; onCancel: () => void }) {
  const user = useUser();
  const form = useRef<HTMLFormElement>(null);
  const scopes: Scope[] = user.scope === 'system' ? ['organization', 'partner', 'system'] : user.scope === 'partner' ? ['organization', 'partner'] : ['organization'];
  const roles = grantableRoles(user);
  const accessOptions = grantableAccess(user, directory);
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('organization');
  const [partnerId, setPartnerId] = useState(user.scope === 'partner' ? user.partnerId ?? '' : '');
  const [orgId, setOrgId] = useState(user.scope === 'organization' ? user.orgId ?? '' : directory.orgs.length === 1 ? directory.orgs[0]!.id : '');
  const [role, setRole] = useState<Role>(roles.includes('technician') ? 'technician' : roles[roles.length - 1]!);
  const [access, setAccess] = useState<OrgAccess>(accessOptions[0]!);
  const [orgIds, setOrgIds] = useState<string[]>([]);
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const invite = useAction(async (body: InviteBody) => call(api.POST('/api/v1/users/invitations', { body })));
  const fieldError = (f: FieldName) => errors[f] ?? invite.error?.forField(f);

  // Opened by a button: the first field takes the focus.
  useEffect(() => form.current?.querySelector<HTMLElement>('input')?.focus(), []);

  const submit = async () => {
    const found: Partial<Record<FieldName, string>> = {};
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) found.email = 'Enter the e-mail address the invitation goes to.';
    else if (email.trim().length > 255) found.email = `The e-mail address can have at most 255 characters (now ${email.trim().length}).`;
    if (!name.trim()) found.name = 'Enter the person’s name.';
    else if (name.trim().length > 255) found.name = `The name can have at most 255 characters (now ${name.trim().length}).`;
    if (scope === 'partner' && !partnerId) found.partnerId = 'Choose the partner.';
    if (scope === 'organization' && !orgId) found.orgId = 'Choose the organization.';
    if (scope === 'partner' && access === 'selected' && orgIds.length === 0) found.orgIds = 'Check at least one organization, or choose no organization.';
    setErrors(found);
    if (Object.keys(found).length > 0) {
      requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"], [role="alert"]')?.focus());
      return;
    }
    const body: InviteBody = { email: email.trim(), name: name.trim(), scope, role };
    if (scope === 'partner') {
      Object.assign(body, { orgAccess: access, ...(access === 'selected' ? { orgIds } : {}) });
      if (user.scope === 'system') body.partnerId = partnerId;
    }
    if (scope === 'organization' && user.scope !== 'organization') body.orgId = orgId;
    const invited = await invite.run(body);
    if (invited) onInvited(invited);
  };

  return (
    <form ref={form} className="panel users-form" noValidate aria-labelledby="invite-title" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
      <h2 id="invite-title">Invite a user</h2>
      <p className="hint">The person gets an e-mail with a link to set their own password. The link works once, for 7 days.</p>
      <Field label="E-mail" error={fieldError('email')}>
        <input type="email" autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} required />
      </Field>
      <Field label="Name" error={fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} required />
      </Field>
      {scopes.length > 1 && (
        <Field label="Belongs to" hint="An organization user works in one organization; a partner user in the partner’s organizations it is given.">
          <select value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
            {scopes.map((s) => <option key={s} value={s}>{SCOPE_LABELS[s]}</option>)}
          </select>
        </Field>
      )}
      {scope === 'partner' && user.scope === 'system' && (
        <Field label="Partner" error={fieldError('partnerId')}>
          <select value={partnerId} onChange={(e) => { setPartnerId(e.target.value); setOrgIds([]); }} required>
            <option value="">Choose a partner…</option>
            {directory.partners.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </Field>
      )}
      {scope === 'organization' && user.scope !== 'organization' && (
        <Field label="Organization" error={fieldError('orgId')}>
          <select value={orgId} onChange={(e) => setOrgId(e.target.value)} required>
            <option value="">Choose an organization…</option>
            {directory.orgs.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
          </select>
        </Field>
      )}
      <RoleField value={role} roles={roles} onChange={setRole} />
      {scope === 'partner' && (
        <AccessFields
          access={access} options={accessOptions} onAccess={setAccess}
          orgIds={orgIds} onOrgIds={setOrgIds} orgs={orgsOfPartner(directory, partnerId || null)} error={fieldError('orgIds')}
        />
      )}
      <ErrorMessage error={explain(invite.error)} />
      <div className="actions">
        <button type="submit" className="primary" disabled={invite.pending}>{invite.pending ? 'Sending…' : 'Send invitation'}</button>
        <button type="button" onClick={onCancel} disabled={invite.pending}>Cancel</button>
      </div>
    </form>
  );
}

/** The server's words, with what to do about the refusals an inviter meets. */
function explain(error: ApiError | null): ApiError | null {
  if (error?.code === 'CONFLICT') return new ApiError(error.status, error.code, 'A user or an open invitation already has this e-mail address. Find them in the lists below.');
  if (error?.status === 503) return new ApiError(error.status, error.code, 'The invitation e-mail could not be sent, so nothing was created. Try again later, or ask the operator to check the mail settings.');
  return error;
}
