// The user shapes as the API gives them (API.md §3), and what the screens derive from them: where a
// user belongs, which roles and organization access the signed-in admin may hand out, and whether a
// user is one the admin may change at all (the service decides; this only avoids offering the hopeless).
import type { Organization, Partner } from '../../api/directory';
import type { Me } from '../../api/types';
import type { paths } from '../../api/schema';
import type { Ok } from '../../api/types';

export type User = Ok<'/api/v1/users/{id}', 'get'>;
export type Role = User['role'];
export type Scope = User['scope'];
export type OrgAccess = NonNullable<User['orgAccess']>;
export type UpdateBody = NonNullable<paths['/api/v1/users/{id}']['patch']['requestBody']>['content']['application/json'];
export type Invitation = Ok<'/api/v1/users/invitations', 'post'>;
export type InviteBody = paths['/api/v1/users/invitations']['post']['requestBody']['content']['application/json'];

/** Every role, most powerful first; a Record over the schema's union, so a new role fails the build until it is here. */
export const ROLE_LABELS: Record<Role, string> = {
  admin: 'Admin: manages organizations, users, keys and devices',
  technician: 'Technician: works on devices, reads the audit log',
  readonly: 'Read-only: looks, changes nothing',
};
const ROLE_RANK: Record<Role, number> = { readonly: 1, technician: 2, admin: 3 };
export const ROLES = Object.keys(ROLE_LABELS) as Role[];

export const SCOPE_LABELS: Record<Scope, string> = {
  system: 'Platform (system)',
  partner: 'Partner',
  organization: 'Organization',
};

export const ACCESS_LABELS: Record<OrgAccess, string> = {
  all: 'Every organization of the partner, present and future',
  selected: 'Only the organizations checked below',
  none: 'No organization (partner settings only)',
};

/** The organizations and partners the signed-in user reaches, and (partner scope) its own organization access. */
export interface UserDirectory {
  orgs: Organization[];
  partners: Partner[];
  /** A partner user's own orgAccess; null for the other scopes or when it could not be read. */
  ownAccess: OrgAccess | null;
}

/** Roles the caller may hand out: none above its own. */
export function grantableRoles(caller: Pick<Me, 'role'>): Role[] {
  return ROLES.filter((r) => ROLE_RANK[r] <= ROLE_RANK[caller.role]);
}

/** Organization access the caller may grant a partner user: "all" only with all of its own. */
export function grantableAccess(caller: Pick<Me, 'scope'>, directory: UserDirectory): OrgAccess[] {
  const all = caller.scope === 'system' || (caller.scope === 'partner' && directory.ownAccess === 'all');
  return all ? ['all', 'selected', 'none'] : ['selected', 'none'];
}

/** The organizations of `partnerId` the caller reaches (those a partner user can be given). */
export function orgsOfPartner(directory: UserDirectory, partnerId: string | null): Organization[] {
  return partnerId ? directory.orgs.filter((o) => o.partnerId === partnerId) : [];
}

export function orgName(directory: UserDirectory | undefined, id: string): string {
  return directory?.orgs.find((o) => o.id === id)?.name ?? 'Organization';
}

/** A partner's name, or null when the console does not know it (not loaded yet, or out of sight). */
export function partnerName(directory: UserDirectory | undefined, id: string): string | null {
  return directory?.partners.find((p) => p.id === id)?.name ?? null;
}

/**
 * Why the caller may not change `target` (its role, access, status, or delete it), or null. Mirrors
 * the service's rules (API.md §3): not oneself, no one holding more than the caller.
 */
export function whyNotManageable(caller: Me, directory: UserDirectory | undefined, target: User): string | null {
  if (target.id === caller.id) return 'This is your own account: another admin changes its role, access or status. Your sessions, MFA and password are under My account.';
  if (ROLE_RANK[target.role] > ROLE_RANK[caller.role]) return 'This user’s role is above yours, so you cannot change it.';
  if (target.scope === 'partner' && caller.scope === 'partner' && directory && directory.ownAccess !== 'all') {
    const reached = new Set(directory.orgs.map((o) => o.id));
    if (target.orgAccess === 'all' || target.orgIds.some((id) => !reached.has(id))) {
      return 'This user reaches organizations you cannot, so you cannot change it.';
    }
  }
  return null;
}

/** What a user's organization access amounts to, in words. */
export function accessSummary(user: Pick<User, 'scope' | 'orgAccess' | 'orgIds'>, directory: UserDirectory | undefined): string {
  if (user.scope !== 'partner') return user.scope === 'system' ? 'Every partner and organization' : 'Its own organization';
  if (user.orgAccess === 'all') return 'Every organization of the partner';
  if (user.orgAccess === 'none' || user.orgIds.length === 0) return 'No organization';
  return user.orgIds.map((id) => orgName(directory, id)).join(', ');
}
