// Users within the caller's reach (API.md §3): a caller creates and changes users only inside its
// own tenant and never hands out more than it holds (role, organization access).
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, readTenant, withTenant } from '../db/tenant-scope.js';
import { AppError, notFound, permissionDenied } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { callerEvent, changeDetails, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import type { CallerResolver } from './callers.js';
import { hashPassword } from './passwords.js';
import { roleCovers, type Role } from './permissions.js';
import { revokeUserSessions } from './sessions.repo.js';
import * as users from './users.repo.js';
import type { UserView } from './schemas.js';
export type { UserView } from './schemas.js';
import type { OrgAccess, UserRow, UserScope } from './users.repo.js';

export interface CreateUserInput {
  email: string;
  name: string;
  password: string;
  scope: UserScope;
  role: Role;
  partnerId?: string;
  orgId?: string;
  orgAccess?: OrgAccess;
  orgIds?: string[];
}

export interface UpdateUserInput {
  email?: string;
  name?: string;
  password?: string;
  role?: Role;
  orgAccess?: OrgAccess;
  orgIds?: string[];
  disabled?: boolean;
}

export interface ListUsersQuery {
  page?: number;
  limit?: number;
  partnerId?: string;
  orgId?: string;
  scope?: UserScope;
}

/** Where a user (or an invitation) stands: scope, tenant, role and, for partner users, which organizations. */
export function accessView(row: Pick<UserRow, 'scope' | 'partner_id' | 'org_id' | 'role' | 'org_access' | 'org_ids'>) {
  return {
    scope: row.scope,
    partnerId: row.partner_id,
    orgId: row.org_id,
    role: row.role,
    orgAccess: row.scope === 'partner' ? row.org_access : null,
    orgIds: row.scope === 'partner' && row.org_access === 'selected' ? row.org_ids : [],
  };
}

export function userView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    ...accessView(row),
    mfaEnabled: row.mfa_enabled,
    lastLoginAt: row.last_login_at?.toISOString() ?? null,
    disabled: row.disabled_at !== null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Whether the caller holds at least the organization access described (never grant more). */
function accessCovers(caller: Caller, access: OrgAccess, orgIds: readonly string[]): boolean {
  if (caller.scope === 'system') return true;
  if (caller.scope !== 'partner') return false;
  if (caller.tenant.scope === 'partner' && caller.tenant.allOrgs) return true;
  if (access === 'all') return false;
  return access === 'none' || orgIds.every((id) => caller.canAccessOrg(id));
}

function assertRoleGrantable(caller: Caller, role: Role): void {
  if (!roleCovers(caller.role as Role, role)) throw permissionDenied('You cannot grant a role above your own');
}

/** Organization access belongs to partner-scope users only, and orgIds only to "selected". */
function assertAccessShape(scope: UserScope, access: OrgAccess, input: { orgAccess?: OrgAccess; orgIds?: string[] }): void {
  if (scope !== 'partner' && (input.orgAccess !== undefined || input.orgIds !== undefined)) {
    throw new AppError('VALIDATION_FAILED', 'orgAccess and orgIds apply only to partner-scope users');
  }
  if (access !== 'selected' && input.orgIds?.length) throw new AppError('VALIDATION_FAILED', 'orgIds is only allowed with orgAccess "selected"');
}

/**
 * The access to grant a partner-scope user of `partnerId`: within the caller's, to live
 * organizations of that partner. `partnerGone` runs on the failure paths only: a create checks
 * its partner there, so that a missing partner stays 404 whatever else is wrong with the request.
 */
async function assertAccessGrantable(
  tx: Transaction,
  caller: Caller,
  partnerId: string | null,
  access: OrgAccess,
  orgIds: string[],
  partnerGone: () => Promise<boolean> = async () => false,
): Promise<void> {
  if (!accessCovers(caller, access, orgIds)) {
    if (await partnerGone()) throw notFound('Partner');
    throw permissionDenied('You cannot grant access to organizations you cannot reach');
  }
  if (orgIds.length === 0) return;
  const found = await users.liveOrganizations(tx, orgIds);
  if (found.length !== orgIds.length || found.some((o) => o.partner_id !== partnerId)) {
    if (await partnerGone()) throw notFound('Partner');
    throw new AppError('VALIDATION_FAILED', 'orgIds must name live organizations of the user’s partner');
  }
}

/** What an audit entry says about a user: never the password or its hash. */
function auditSnapshot(row: UserRow) {
  const view = userView(row);
  return { email: view.email, name: view.name, scope: view.scope, role: view.role, partnerId: view.partnerId, orgId: view.orgId, orgAccess: view.orgAccess, orgIds: view.orgIds, disabled: view.disabled };
}

/** A visible user (or invitation) the caller may manage: it holds no more than the caller. */
export function assertManageable(caller: Caller, target: Pick<UserRow, 'role' | 'scope' | 'org_access' | 'org_ids'>): void {
  if (!roleCovers(caller.role as Role, target.role)) throw permissionDenied('You cannot change a user whose role is above yours');
  if (target.scope === 'partner' && !accessCovers(caller, target.org_access, target.org_ids)) {
    throw permissionDenied('You cannot change a user who reaches organizations you cannot');
  }
}

/** Who a new user (or invitation) is: the /users create body without its credentials. */
export type NewUserInput = Omit<CreateUserInput, 'password' | 'email' | 'name'>;

/** The organization access a new user gets; refuses a role above the caller's and a malformed grant. */
export function grantOf(caller: Caller, input: NewUserInput): { orgAccess: OrgAccess; orgIds: string[] } {
  assertRoleGrantable(caller, input.role);
  const orgAccess: OrgAccess = input.scope === 'partner' ? (input.orgAccess ?? 'all') : 'none';
  const orgIds = input.scope === 'partner' && orgAccess === 'selected' ? [...new Set(input.orgIds ?? [])] : [];
  assertAccessShape(input.scope, orgAccess, input);
  return { orgAccess, orgIds };
}

/** Where a new user (or invitation) lands: its scope, tenant and grants. */
export interface Placement {
  scope: UserScope;
  role: Role;
  partnerId: string | null;
  orgId: string | null;
  orgAccess: OrgAccess;
  orgIds: string[];
}

/**
 * Places a new user (or invitation) of `input` inside the caller's reach (API.md §3) and stores it
 * with `insert`. For a tenant placement `insert` must store only if what it belongs to is live as
 * far as the caller's scope sees (a partner-scope placement's partner; an organization-scope
 * placement's organization, of `partnerId` when given, whose partner it takes) and return null
 * otherwise, as users.insertTenantUser does: the check then costs no statement of its own.
 */
export async function placeWithinReach<R>(
  tx: Transaction,
  caller: Caller,
  input: NewUserInput,
  grant: { orgAccess: OrgAccess; orgIds: string[] },
  insert: (placement: Placement) => Promise<R | null>,
): Promise<R> {
  const placed = (partnerId: string | null, orgId: string | null) => insert({ scope: input.scope, role: input.role, partnerId, orgId, ...grant });
  if (input.scope === 'system') {
    if (caller.scope !== 'system') throw permissionDenied('Only system-scope users can create system-scope users');
    if (input.partnerId || input.orgId) throw new AppError('VALIDATION_FAILED', 'System-scope users belong to no partner or organization');
    const row = await placed(null, null);
    if (!row) throw new Error('a system-scope placement is stored unconditionally');
    return row;
  }
  if (input.scope === 'partner') {
    if (input.orgId) throw new AppError('VALIDATION_FAILED', 'Partner-scope users belong to no single organization: use orgAccess/orgIds');
    if (caller.scope === 'organization') throw permissionDenied('Organization-scope users can only create users of their organization');
    const partnerId = caller.scope === 'partner' ? caller.partnerId : (input.partnerId ?? null);
    if (!partnerId) throw new AppError('VALIDATION_FAILED', 'partnerId is required for partner-scope users');
    if (caller.scope === 'partner' && input.partnerId && input.partnerId !== caller.partnerId) {
      throw permissionDenied('You can only create users of your own partner');
    }
    // The partner must be live: the insert checks it, and the failure paths before it look first.
    await assertAccessGrantable(tx, caller, partnerId, grant.orgAccess, grant.orgIds, async () => !(await users.partnerStatus(tx, partnerId)));
    const row = await placed(partnerId, null);
    if (!row) throw notFound('Partner');
    return row;
  }
  const orgId = caller.scope === 'organization' ? caller.orgId : (input.orgId ?? null);
  if (!orgId) throw new AppError('VALIDATION_FAILED', 'orgId is required for organization-scope users');
  const outOfReach = () => permissionDenied('You cannot create users in an organization outside your reach');
  if (input.orgId && !caller.canAccessOrg(input.orgId)) throw outOfReach();
  // The organization must be live (and of partnerId, when given): the insert checks it.
  const row = await placed(input.partnerId ?? null, orgId);
  if (!row) {
    const [org] = await users.liveOrganizations(tx, [orgId]);
    if (!org) throw caller.scope === 'system' ? notFound('Organization') : outOfReach();
    throw new AppError('VALIDATION_FAILED', 'partnerId does not match the organization’s partner');
  }
  return row;
}

const ACCESS_FIELDS = ['role', 'orgAccess', 'orgIds'] as const;

export function createUsersService(deps: { db: Database; callers: CallerResolver; recordAudit: RecordAudit; now: () => number }) {
  const { db, callers, recordAudit, now } = deps;
  const userEvent = (caller: Caller, meta: RequestMeta, action: AuditAction, row: UserRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.org_id, action, resource: { type: 'user', id: row.id, name: row.email }, details });

  async function create(caller: Caller, input: CreateUserInput, meta: RequestMeta): Promise<UserView> {
    const grant = grantOf(caller, input);
    // Hashing takes tens of milliseconds of CPU: done before the transaction holds a connection.
    const passwordHash = await hashPassword(input.password);
    return withTenant(db, caller.tenant, async (tx) => {
      const fields = { email: input.email.trim(), name: input.name, passwordHash };
      // A live user's e-mail (any case) taken already: users_live_email refuses the insert, a 409.
      const row = await placeWithinReach(tx, caller, input, grant, (p) =>
        p.scope === 'system' ? users.insertUser(tx, { ...fields, ...p }) : users.insertTenantUser(tx, { ...fields, ...p }));
      await recordAudit(tx, userEvent(caller, meta, 'user.create', row, { after: auditSnapshot(row) }));
      return userView(row);
    });
  }

  async function list(caller: Caller, query: ListUsersQuery & { skipCount?: boolean }): Promise<PaginatedResult<UserView>> {
    const page = pageOf(query);
    return readTenant(db, caller.tenant, async (tx) => {
      const reach = caller.accessibleOrgIds && { orgIds: caller.accessibleOrgIds, partnerId: caller.scope === 'partner' ? caller.partnerId : null };
      const filter: users.UserListFilter = { reach };
      if (query.partnerId) filter.partnerId = query.partnerId;
      if (query.orgId) filter.orgId = query.orgId;
      if (query.scope) filter.scope = query.scope;
      const { rows, total } = await users.listUsers(tx, filter, page.limit, page.offset, !query.skipCount);
      return paginated(rows.map(userView), page, total);
    });
  }

  async function get(caller: Caller, id: string): Promise<UserView> {
    const row = await readTenant(db, caller.tenant, (tx) => users.findUserById(tx, id));
    if (!row) throw notFound('User');
    return userView(row);
  }

  /**
   * The error for a change to a user the caller cannot see: API.md §2 makes a change outside the
   * caller's reach 403, while an id that exists nowhere stays 404.
   */
  async function unreachableUser(id: string): Promise<AppError> {
    const exists = await withTenant(db, SYSTEM_SCOPE, (tx) => users.userExists(tx, id));
    return exists ? permissionDenied('This user is outside your reach') : notFound('User');
  }

  async function update(caller: Caller, id: string, input: UpdateUserInput, meta: RequestMeta): Promise<UserView> {
    const changesAccess = input.role !== undefined || input.orgAccess !== undefined || input.orgIds !== undefined;
    if (changesAccess && id === caller.id) throw permissionDenied('You cannot change your own role or organization access');
    if (input.disabled !== undefined && id === caller.id) throw permissionDenied('You cannot disable or enable yourself');
    if (input.role !== undefined) assertRoleGrantable(caller, input.role);

    const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
    const view = await withTenant(db, caller.tenant, async (tx) => {
      // Read first (locked, as the change is computed from it): whether the caller may manage the
      // user is decided before an e-mail's uniqueness (403 before 409), and access changes need
      // the stored grants.
      const target = await users.findUserById(tx, id, true);
      if (!target) return null;
      assertManageable(caller, target);
      const changes: users.UserChanges = {};
      if (input.email !== undefined) changes.email = input.email.trim();
      if (input.name !== undefined) changes.name = input.name;
      if (input.role !== undefined) changes.role = input.role;
      if (input.orgAccess !== undefined || input.orgIds !== undefined) {
        const access = input.orgAccess ?? target.org_access;
        assertAccessShape(target.scope, access, input);
        const ids = access === 'selected' ? [...new Set(input.orgIds ?? target.org_ids)] : [];
        await assertAccessGrantable(tx, caller, target.partner_id, access, ids);
        changes.orgAccess = access;
        changes.orgIds = ids;
      }
      if (passwordHash !== undefined) {
        changes.passwordHash = passwordHash;
        await revokeUserSessions(tx, id, 'password changed', new Date(now()), id === caller.id ? caller.sessionId : null);
      }
      if (input.disabled !== undefined && input.disabled !== (target.disabled_at !== null)) {
        changes.disabledAt = input.disabled ? new Date(now()) : null;
        if (input.disabled) await revokeUserSessions(tx, id, 'user disabled', new Date(now()), null);
      }
      // A taken e-mail: users_live_email, 409. Nothing to change (disabling a disabled user): the row as it is.
      const row = Object.keys(changes).length > 0 ? await users.updateUser(tx, id, changes) : target;
      if (!row) return null;
      const before = auditSnapshot(target);
      const after = auditSnapshot(row);
      const changedFields = (Object.keys(input) as (keyof UpdateUserInput)[]).filter((k) => input[k] !== undefined);
      await recordAudit(tx, userEvent(caller, meta, 'user.update', row, changeDetails(changedFields, before, after, ['password'])));
      if (ACCESS_FIELDS.some((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]))) {
        const access = (snapshot: typeof before) => ({ role: snapshot.role, orgAccess: snapshot.orgAccess, orgIds: snapshot.orgIds });
        await recordAudit(tx, userEvent(caller, meta, 'user.permission.change', row, { before: access(before), after: access(after) }));
      }
      return userView(row);
    });
    if (!view) throw await unreachableUser(id);
    callers.announceChange('user updated');
    return view;
  }

  async function remove(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
    if (id === caller.id) throw permissionDenied('You cannot delete your own account');
    const deleted = await withTenant(db, caller.tenant, async (tx) => {
      const target = await users.deleteUserEndingSessions(tx, id, new Date(now()), 'user deleted');
      if (!target) return false;
      assertManageable(caller, target); // throws, rolling the delete back
      await recordAudit(tx, userEvent(caller, meta, 'user.delete', target, { before: auditSnapshot(target) }));
      return true;
    });
    if (!deleted) throw await unreachableUser(id);
    callers.announceChange('user deleted');
    return { success: true };
  }

  return { create, list, get, update, remove };
}

export type UsersService = ReturnType<typeof createUsersService>;
