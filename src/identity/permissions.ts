// Roles and the permissions they carry (API.md §3).
export const ROLES = ['admin', 'technician', 'readonly'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  'organizations:read',
  'organizations:write',
  'users:read',
  'users:write',
  'devices:read',
  'devices:write',
  'devices:execute',
  'audit:read',
  'audit:export',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  admin: new Set(PERMISSIONS),
  technician: new Set<Permission>(['organizations:read', 'devices:read', 'devices:write', 'devices:execute', 'audit:read']),
  readonly: new Set<Permission>(['organizations:read', 'devices:read', 'audit:read']),
};

export function permissionsOf(role: Role): ReadonlySet<Permission> {
  return ROLE_PERMISSIONS[role];
}

const ROLE_RANK: Record<Role, number> = { readonly: 1, technician: 2, admin: 3 };

/** True when a holder of `held` may hand out `granted` (never more than it holds). */
export function roleCovers(held: Role, granted: Role): boolean {
  return ROLE_RANK[held] >= ROLE_RANK[granted];
}
