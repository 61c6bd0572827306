// SQL for users. Every function takes the transaction it runs in; row-level security applies.
import type { Queryable } from '../db/database.js';
import type { Role } from './permissions.js';

export type UserScope = 'system' | 'partner' | 'organization';
export type OrgAccess = 'all' | 'selected' | 'none';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
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
  created_at: Date;
  updated_at: Date;
}

const USER_COLUMNS = `id, email, name, password_hash, scope, partner_id, org_id, role, org_access, org_ids,
  mfa_enabled, mfa_secret, mfa_pending_secret, last_login_at, created_at, updated_at`;

export async function findUserByEmail(tx: Queryable, email: string): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(
    `select ${USER_COLUMNS} from users where lower(email) = lower($1) and deleted_at is null`,
    [email],
  );
  return rows[0] ?? null;
}

export async function findUserById(tx: Queryable, id: string): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(`select ${USER_COLUMNS} from users where id = $1 and deleted_at is null`, [id]);
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
  passwordHash: string;
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

export interface UserChanges {
  email?: string;
  name?: string;
  passwordHash?: string;
  role?: Role;
  orgAccess?: OrgAccess;
  orgIds?: string[];
}

const CHANGE_COLUMNS: Record<keyof UserChanges, string> = {
  email: 'email',
  name: 'name',
  passwordHash: 'password_hash',
  role: 'role',
  orgAccess: 'org_access',
  orgIds: 'org_ids',
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

export async function softDeleteUser(tx: Queryable, id: string, at: Date): Promise<boolean> {
  const { rowCount } = await tx.query(`update users set deleted_at = $2 where id = $1 and deleted_at is null`, [id, at]);
  return rowCount === 1;
}

export interface UserListFilter {
  partnerId?: string;
  orgId?: string;
  scope?: UserScope;
}

export async function listUsers(
  tx: Queryable,
  filter: UserListFilter,
  limit: number,
  offset: number,
  withTotal: boolean,
): Promise<{ rows: UserRow[]; total: number | null }> {
  const where = ['deleted_at is null'];
  const params: unknown[] = [];
  if (filter.partnerId) where.push(`partner_id = $${params.push(filter.partnerId)}`);
  if (filter.orgId) where.push(`org_id = $${params.push(filter.orgId)}`);
  if (filter.scope) where.push(`scope = $${params.push(filter.scope)}`);
  const clause = where.join(' and ');
  const { rows } = await tx.query<UserRow>(
    `select ${USER_COLUMNS} from users where ${clause} order by created_at desc, id desc
     limit $${params.length + 1} offset $${params.length + 2}`,
    [...params, limit, offset],
  );
  if (!withTotal) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total from users where ${clause}`, params);
  return { rows, total: count.rows[0]!.total };
}

/** Serialises first-admin creation: two instances starting on an empty database take turns. */
export async function lockBootstrap(tx: Queryable): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('bootstrap-admin'))`);
}

export async function countUsers(tx: Queryable): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(`select count(*)::int as n from users`);
  return rows[0]!.n;
}

export async function setPendingMfaSecret(tx: Queryable, id: string, sealed: string): Promise<void> {
  await tx.query(`update users set mfa_pending_secret = $2 where id = $1`, [id, sealed]);
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

export async function touchLastLogin(tx: Queryable, id: string, at: Date): Promise<void> {
  await tx.query(`update users set last_login_at = $2 where id = $1`, [id, at]);
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
