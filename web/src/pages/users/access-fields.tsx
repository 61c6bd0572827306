// The fields that say what a user may do: its role, and for a partner user which of the partner's
// organizations it reaches. Both forms (invite, change) offer only what the signed-in admin may grant.
import { Link } from 'react-router';
import type { Organization } from '../../api/directory';
import { Checkbox, Field } from '../../ui/forms';
import { ACCESS_LABELS, ROLE_LABELS, type OrgAccess, type Role } from './user';

export function RoleField({ value, roles, onChange, error }: { value: Role; roles: Role[]; onChange: (role: Role) => void; error?: string | undefined }) {
  return (
    <Field label="Role" error={error} hint="You can hand out roles up to your own.">
      <select value={value} onChange={(e) => onChange(e.target.value as Role)}>
        {roles.map((r) => <option key={r} value={r}>{ROLE_LABELS[r]}</option>)}
      </select>
    </Field>
  );
}

/** Organization access of a partner user: all, the checked ones, or none (API.md §3 orgAccess, orgIds). */
export function AccessFields({ access, options, onAccess, orgIds, onOrgIds, orgs, error }: {
  access: OrgAccess;
  /** What the admin may grant ("all" needs all of its own). */
  options: OrgAccess[];
  onAccess: (access: OrgAccess) => void;
  orgIds: string[];
  onOrgIds: (ids: string[]) => void;
  /** The partner's organizations the admin reaches. */
  orgs: Organization[];
  error?: string | undefined;
}) {
  const toggle = (id: string, on: boolean) => onOrgIds(on ? [...orgIds, id] : orgIds.filter((x) => x !== id));
  // Organizations already granted but outside the admin's sight stay granted; they are listed by count.
  const hidden = orgIds.filter((id) => !orgs.some((o) => o.id === id)).length;
  return (
    <fieldset className="users-fieldset">
      <legend>Organization access</legend>
      {(['all', 'selected', 'none'] as const).filter((a) => options.includes(a) || a === access).map((a) => (
        <label key={a} className="checkbox users-radio">
          <input type="radio" name="orgAccess" value={a} checked={access === a} disabled={!options.includes(a)} onChange={() => onAccess(a)} /> {ACCESS_LABELS[a]}
        </label>
      ))}
      {!options.includes('all') && <small className="hint users-block">“Every organization” needs access to every organization of the partner yourself.</small>}
      {access === 'selected' && (
        <fieldset className="users-fieldset users-orgs" aria-describedby={error ? 'org-access-error' : undefined}>
          <legend>Organizations</legend>
          {orgs.length === 0 && <p className="hint">The partner has no organization you reach. <Link to="/organizations">Organizations</Link></p>}
          {orgs.map((o) => <Checkbox key={o.id} label={o.name} checked={orgIds.includes(o.id)} onChange={(on) => toggle(o.id, on)} />)}
          {hidden > 0 && <small className="hint users-block">Also {hidden} organization{hidden === 1 ? '' : 's'} you cannot see, kept as they are.</small>}
        </fieldset>
      )}
      {error && <small id="org-access-error" className="field-error users-block" role="alert">{error}</small>}
    </fieldset>
  );
}
