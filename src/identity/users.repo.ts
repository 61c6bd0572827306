// SQL for users. Every function takes the transaction it runs in; row-level security applies.
import type { Queryable } from '../db/database.js';
import { queryPage } from '../db/pages.js';
import type { Role } from './permissions.js';

export type UserScope = 'system' | 'partner' | 'organization';
export type OrgAccess = 'all' | 'selected' | 'none';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  scope: UserScope;
  partner_id: string | null;
  org_id: string | null;
  role: Role;
  org_access: OrgAccess;
  org_ids: string[];
  mfa_enabled: boolean;
  mfa_secret: string | null;
  mfa_pending_secret: string | null;
  last_login_at: Date | null;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const USER_COLUMN_NAMES = ['id', 'email', 'name', 'password_hash', 'scope', 'partner_id', 'org_id', 'role', 'org_access', 'org_ids',
  'mfa_enabled', 'mfa_secret', 'mfa_pending_secret', 'last_login_at', 'disabled_at', 'created_at', 'updated_at'];
const USER_COLUMNS = USER_COLUMN_NAMES.join(', ');

/** A UserRow's columns, of the table aliased `alias`. */
export const userColumns = (alias: string) => USER_COLUMN_NAMES.map((c) => `${alias}.${c}`).join(', ');

/** A live user; `forUpdate` locks it (a change computed from the stored row). */
export async function findUserById(tx: Queryable, id: string, forUpdate = false): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(`select ${USER_COLUMNS} from users where id = $1 and deleted_at is null${forUpdate ? ' for update' : ''}`, [id]);
  return rows[0] ?? null;
}

/** Whether a live user with this id exists anywhere (run in the system scope). */
export async function userExists(tx: Queryable, id: string): Promise<boolean> {
  const { rows } = await tx.query(`select 1 from users where id = $1 and deleted_at is null`, [id]);
  return rows.length > 0;
}

export interface NewUser {
  email: string;
  name: string;
  passwordHash: string | null;
  scope: UserScope;
  partnerId: string | null;
  orgId: string | null;
  role: Role;
  orgAccess: OrgAccess;
  orgIds: string[];
}

export async function insertUser(tx: Queryable, user: NewUser): Promise<UserRow> {
  const { rows } = await tx.query<UserRow>(
    `insert into users (email, name, password_hash, scope, partner_id, org_id, role, org_access, org_ids)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9::uuid[]) returning ${USER_COLUMNS}`,
    [user.email, user.name, user.passwordHash, user.scope, user.partnerId, user.orgId, user.role, user.orgAccess, user.orgIds],
  );
  return rows[0]!;
}

/**
 * Inserts a tenant's user only if what it belongs to is live, as far as the scope can see: a
 * partner-scope user's partner, or an organization-scope user's organization (whose partner the
 * user takes; `partnerId`, when given, must be it). Null otherwise: the check costs no statement of
 * its own, and the caller finds out which rule failed on that path only.
 */
export async function insertTenantUser(tx: Queryable, user: NewUser): Promise<UserRow | null> {
  const source = user.scope === 'organization'
    ? `select $1, $2, $3, $4, o.partner_id, o.id, $7, $8, $9::uuid[] from organizations o
        where o.id = $6::uuid and o.deleted_at is null and ($5::uuid is null or o.partner_id = $5::uuid)`
    : `select $1, $2, $3, $4, p.id, $6::uuid, $7, $8, $9::uuid[] from partners p where p.id = $5::uuid and p.deleted_at is null`;
  const { rows } = await tx.query<UserRow>(
    `insert into users (email, name, password_hash, scope, partner_id, org_id, role, org_access, org_ids) ${source} returning ${USER_COLUMNS}`,
    [user.email, user.name, user.passwordHash, user.scope, user.partnerId, user.orgId, user.role, user.orgAccess, user.orgIds],
  );
  return rows[0] ?? null;
}

export interface UserChanges {
  email?: string;
  name?: string;
  passwordHash?: string;
  role?: Role;
  orgAccess?: OrgAccess;
  orgIds?: string[];
  disabledAt?: Date | null;
}

const CHANGE_COLUMNS: Record<keyof UserChanges, string> = {
  email: 'email',
  name: 'name',
  passwordHash: 'password_hash',
  role: 'role',
  orgAccess: 'org_access',
  orgIds: 'org_ids',
  disabledAt: 'disabled_at',
};

export async function updateUser(tx: Queryable, id: string, changes: UserChanges): Promise<UserRow | null> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined) as [keyof UserChanges, unknown][];
  const sets = entries.map(([key], i) => `${CHANGE_COLUMNS[key]} = $${i + 2}${key === 'orgIds' ? '::uuid[]' : ''}`);
  const { rows } = await tx.query<UserRow>(
    `update users set ${sets.join(', ')} where id = $1 and deleted_at is null returning ${USER_COLUMNS}`,
    [id, ...entries.map(([, v]) => v)],
  );
  return rows[0] ?? null;
}

/**
 * Soft-deletes a live user and ends its sessions, in one statement; returns the user as it was
 * (null when the scope sees no such user).
 */
export async function deleteUserEndingSessions(tx: Queryable, id: string, at: Date, reason: string): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(
    `with target as (select ${USER_COLUMNS} from users where id = $1 and deleted_at is null for update),
          deleted as (update users set deleted_at = $2 where id = (select id from target)),
          ended as (update sessions set revoked_at = $2, revoked_reason = $3 where user_id = (select id from target) and revoked_at is null)
     select * from target`,
    [id, at, reason],
  );
  return rows[0] ?? null;
}

export interface UserListFilter {
  partnerId?: string;
  orgId?: string;
  scope?: UserScope;
  /**
   * The users the caller reaches, as row-level security decides them (null: everyone, system
   * scope): those of these organizations, and the partner-level users of `partnerId`. Stated in
   * the query, so that it reads those users through their indexes instead of filtering them out of
   * every tenant's (row-level security's OR cannot use an index).
   */
  reach: { orgIds: readonly string[]; partnerId: string | null } | null;
}

/**
 * A page of a table shaped like users (scope, partner_id, org_id, created_at: users and their
 * invitations), filtered by the caller's reach and the list's filters, newest first.
 */
export function pageOfTenantUsers<R extends object>(
  tx: Queryable, table: string, columns: string, base: string, filter: UserListFilter, page: { limit: number; offset: number; withTotal: boolean },
): Promise<{ rows: R[]; total: number | null }> {
  const where = [base];
  const params: unknown[] = [];
  if (filter.reach) {
    where.push(`(org_id = any($${params.push(filter.reach.orgIds)}::uuid[]) or (org_id is null and partner_id = $${params.push(filter.reach.partnerId)}::uuid))`);
  }
  if (filter.partnerId) where.push(`partner_id = $${params.push(filter.partnerId)}`);
  if (filter.orgId) where.push(`org_id = $${params.push(filter.orgId)}`);
  if (filter.scope) where.push(`scope = $${params.push(filter.scope)}`);
  const clause = where.join(' and ');
  return queryPage<R>(tx, {
    rows: `select ${columns} from ${table} where ${clause} order by created_at desc, id desc limit $${params.length + 1} offset $${params.length + 2}`,
    count: page.withTotal ? `select count(*)::int from ${table} where ${clause}` : null,
    params: [...params, page.limit, page.offset],
  });
}

export function listUsers(
  tx: Queryable,
  filter: UserListFilter,
  limit: number,
  offset: number,
  withTotal: boolean,
): Promise<{ rows: UserRow[]; total: number | null }> {
  return pageOfTenantUsers<UserRow>(tx, 'users', USER_COLUMNS, 'deleted_at is null', filter, { limit, offset, withTotal });
}

/** Serialises first-admin creation: two instances starting on an empty database take turns. */
export async function lockBootstrap(tx: Queryable): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('bootstrap-admin'))`);
}

export async function countUsers(tx: Queryable): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(`select count(*)::int as n from users`);
  return rows[0]!.n;
}

/** Stores a TOTP enrolment's secret for a live user without MFA; returns the user's e-mail, null for no such user. */
export async function setPendingMfaSecret(tx: Queryable, id: string, sealed: string): Promise<string | null> {
  const { rows } = await tx.query<{ email: string }>(
    `update users set mfa_pending_secret = $2 where id = $1 and deleted_at is null and not mfa_enabled returning email`,
    [id, sealed],
  );
  return rows[0]?.email ?? null;
}

export async function activateMfa(tx: Queryable, id: string, step: number): Promise<void> {
  await tx.query(
    `update users set mfa_enabled = true, mfa_secret = mfa_pending_secret, mfa_pending_secret = null, mfa_last_step = $2
     where id = $1`,
    [id, step],
  );
}

/** Records a TOTP step as used; false when that step or a later one was used already (replay). */
export async function consumeMfaStep(tx: Queryable, id: string, step: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `update users set mfa_last_step = $2 where id = $1 and (mfa_last_step is null or mfa_last_step < $2)`,
    [id, step],
  );
  return rowCount === 1;
}

/** Organizations of a partner that are live, for validating grants. */
export async function liveOrganizations(tx: Queryable, ids: readonly string[]): Promise<{ id: string; partner_id: string }[]> {
  const { rows } = await tx.query<{ id: string; partner_id: string }>(
    `select id, partner_id from organizations where id = any($1::uuid[]) and deleted_at is null`,
    [ids],
  );
  return rows;
}

export async function partnerStatus(tx: Queryable, id: string): Promise<string | null> {
  const { rows } = await tx.query<{ status: string }>(`select status from partners where id = $1 and deleted_at is null`, [id]);
  return rows[0]?.status ?? null;
}
