// SQL for user invitations. Every function takes the transaction it runs in; row-level security
// applies (tenants see the invitations in their reach, as they see users).
import type { Queryable } from '../db/database.js';
import type { Role } from './permissions.js';
import { pageOfTenantUsers, type OrgAccess, type UserListFilter, type UserScope } from './users.repo.js';

export interface InvitationRow {
  id: string;
  email: string;
  name: string;
  scope: UserScope;
  partner_id: string | null;
  org_id: string | null;
  role: Role;
  org_access: OrgAccess;
  org_ids: string[];
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
}

const COLUMNS = 'id, email, name, scope, partner_id, org_id, role, org_access, org_ids, invited_by, created_at, expires_at';
/** An invitation that can still be accepted or deleted: neither accepted nor deleted (it may have expired). */
const OPEN = 'accepted_at is null and deleted_at is null';

export interface NewInvitation {
  email: string;
  name: string;
  scope: UserScope;
  partnerId: string | null;
  orgId: string | null;
  role: Role;
  orgAccess: OrgAccess;
  orgIds: string[];
  tokenHash: string;
  invitedBy: string | null;
  at: Date;
  expiresAt: Date;
}

/**
 * Stores an invitation. A tenant's (partner or organization scope) is stored only if what it
 * belongs to is live as far as the scope sees, as users.insertTenantUser does; null otherwise.
 */
export async function insertInvitation(tx: Queryable, inv: NewInvitation): Promise<InvitationRow | null> {
  const select = (partner: string, org: string) =>
    `select $1, $2, $3, ${partner}, ${org}, $6, $7, $8::uuid[], $9, $10::uuid, $11::timestamptz, $12::timestamptz`;
  let source: string;
  if (inv.scope === 'organization') {
    source = `${select('o.partner_id', 'o.id')} from organizations o
               where o.id = $5::uuid and o.deleted_at is null and ($4::uuid is null or o.partner_id = $4::uuid)`;
  } else if (inv.scope === 'partner') {
    source = `${select('p.id', '$5::uuid')} from partners p where p.id = $4::uuid and p.deleted_at is null`;
  } else {
    source = select('$4::uuid', '$5::uuid');
  }
  const { rows } = await tx.query<InvitationRow>(
    `insert into user_invitations (email, name, scope, partner_id, org_id, role, org_access, org_ids, token_hash, invited_by, created_at, expires_at)
     ${source} returning ${COLUMNS}`,
    [inv.email, inv.name, inv.scope, inv.partnerId, inv.orgId, inv.role, inv.orgAccess, inv.orgIds, inv.tokenHash, inv.invitedBy, inv.at, inv.expiresAt],
  );
  return rows[0] ?? null;
}

/**
 * Before a new invitation for `email`: deletes the open invitations for it that have expired (in
 * any tenant: run in the system scope), so they do not hold the address, and says whether a live
 * user has it already. One statement.
 */
export async function clearExpiredForEmail(tx: Queryable, email: string, at: Date): Promise<{ userExists: boolean }> {
  const { rows } = await tx.query<{ user_exists: boolean }>(
    `with voided as (update user_invitations set deleted_at = $2
                      where lower(email) = lower($1) and ${OPEN} and expires_at <= $2)
     select exists (select 1 from users where lower(email) = lower($1) and deleted_at is null) as user_exists`,
    [email, at],
  );
  return { userExists: rows[0]!.user_exists };
}

/** Marks an open invitation deleted (its token stops working); returns it as it was, null when the scope sees none. */
export async function deleteOpenInvitation(tx: Queryable, id: string, at: Date): Promise<InvitationRow | null> {
  const { rows } = await tx.query<InvitationRow>(
    `update user_invitations set deleted_at = $2 where id = $1 and ${OPEN} returning ${COLUMNS}`,
    [id, at],
  );
  return rows[0] ?? null;
}

/** Whether an open invitation with this id exists anywhere (run in the system scope). */
export async function openInvitationExists(tx: Queryable, id: string): Promise<boolean> {
  const { rows } = await tx.query(`select 1 from user_invitations where id = $1 and ${OPEN}`, [id]);
  return rows.length > 0;
}

/** The open, unexpired invitation of a token (run in the system scope), without locking it. */
export async function findUsableInvitation(tx: Queryable, tokenHash: string, at: Date): Promise<InvitationRow | null> {
  const { rows } = await tx.query<InvitationRow>(
    `select ${COLUMNS} from user_invitations where token_hash = $1 and ${OPEN} and expires_at > $2`,
    [tokenHash, at],
  );
  return rows[0] ?? null;
}

/**
 * Marks the invitation of a token accepted if it is still open and unexpired; returns it, or null.
 * Two accepts of one token: the second waits on the first's row lock, then finds it accepted
 * (PostgreSQL re-checks the condition on the updated row), so exactly one wins.
 */
export async function claimInvitation(tx: Queryable, tokenHash: string, at: Date): Promise<InvitationRow | null> {
  const { rows } = await tx.query<InvitationRow>(
    `update user_invitations set accepted_at = $2 where token_hash = $1 and ${OPEN} and expires_at > $2 returning ${COLUMNS}`,
    [tokenHash, at],
  );
  return rows[0] ?? null;
}

export async function recordAcceptingUser(tx: Queryable, id: string, userId: string): Promise<void> {
  await tx.query(`update user_invitations set accepted_user_id = $2 where id = $1`, [id, userId]);
}

/** The /users list filter: the same columns, the same reach. */
export type InvitationListFilter = UserListFilter;

/** Open invitations (expired ones included), newest first. */
export function listOpenInvitations(
  tx: Queryable,
  filter: InvitationListFilter,
  limit: number,
  offset: number,
  withTotal: boolean,
): Promise<{ rows: InvitationRow[]; total: number | null }> {
  return pageOfTenantUsers<InvitationRow>(tx, 'user_invitations', COLUMNS, OPEN, filter, { limit, offset, withTotal });
}
