// SQL for password reset: reset tokens and the "forgot password" request counts. Always run in the
// system scope: these tables are the service's own bookkeeping.
import type { Queryable } from '../db/database.js';
import { userColumns, type UserRow } from './users.repo.js';

// --- "forgot password" requests -----------------------------------------------------------------

/**
 * Serialises requests from one client address, then those for one e-mail, until the transaction
 * ends (the address's lock first: the inner select runs before the outer one can), so parallel
 * requests count one another. Counts must come in a later statement, which sees what committed
 * while it waited.
 */
export async function lockResetRequests(tx: Queryable, clientKey: string, emailKey: string): Promise<void> {
  await tx.query(
    `select pg_advisory_xact_lock(hashtext('forgot-email'), hashtext($2))
       from (select pg_advisory_xact_lock(hashtext('forgot-client'), hashtext($1))) address`,
    [clientKey, emailKey],
  );
}

export interface RequestCounts {
  fromClient: { count: number; oldest: Date | null };
  forEmail: { count: number; oldest: Date | null };
  recorded: boolean;
}

/**
 * One request, in one statement under lockResetRequests: the e-mail's and the address's requests
 * older than the window pruned, those in the window counted (the new one not among them), and the
 * request recorded unless either is at its limit. A refused request is not recorded, so a lock
 * ends with its window.
 */
export async function recordResetRequest(
  tx: Queryable,
  r: { emailKey: string; clientKey: string; since: Date; at: Date; addressMax: number; emailMax: number },
): Promise<RequestCounts> {
  const { rows } = await tx.query<{ client_count: number; client_oldest: Date | null; email_count: number; email_oldest: Date | null; recorded: boolean }>(
    `with pruned as (delete from password_reset_requests where (email_key = $1 or client_key = $2) and requested_at <= $3),
          counts as (
            select c.n as client_count, c.oldest as client_oldest, e.n as email_count, e.oldest as email_oldest
              from (select count(*)::int as n, min(requested_at) as oldest from password_reset_requests where client_key = $2 and requested_at > $3) c,
                   (select count(*)::int as n, min(requested_at) as oldest from password_reset_requests where email_key = $1 and requested_at > $3) e),
          recorded as (
            insert into password_reset_requests (email_key, client_key, requested_at)
            select $1, $2, $4 from counts where client_count < $5 and email_count < $6 returning id)
     select counts.*, exists (select 1 from recorded) as recorded from counts`,
    [r.emailKey, r.clientKey, r.since, r.at, r.addressMax, r.emailMax],
  );
  const row = rows[0]!;
  return {
    fromClient: { count: row.client_count, oldest: row.client_oldest },
    forEmail: { count: row.email_count, oldest: row.email_oldest },
    recorded: row.recorded,
  };
}

/** Deletes up to `limit` requests made before `before` (for housekeeping). */
export async function deleteResetRequestsBefore(tx: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await tx.query(
    `delete from password_reset_requests where id in (select id from password_reset_requests where requested_at < $1 limit $2)`,
    [before, limit],
  );
  return rowCount;
}

// --- reset tokens -----------------------------------------------------------------------------------

/** Deletes up to `limit` tokens that expired, or were used (or voided), before `before` (for housekeeping). */
export async function deleteEndedResetTokens(tx: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await tx.query(
    `delete from password_resets where id in (
       select id from password_resets where expires_at < $1
       union
       select id from password_resets where used_at < $1
       limit $2)`,
    [before, limit],
  );
  return rowCount;
}

/** The live, enabled user with this e-mail (any case): the one a reset link may be mailed to. */
export async function findResettableUser(tx: Queryable, email: string): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(
    `select ${userColumns('u')} from users u where lower(u.email) = lower($1) and u.deleted_at is null and u.disabled_at is null`,
    [email],
  );
  return rows[0] ?? null;
}

/** Stores a new reset token for the user and voids the user's earlier unused ones, in one statement. */
export async function issueResetToken(tx: Queryable, userId: string, tokenHash: string, at: Date, expiresAt: Date): Promise<void> {
  await tx.query(
    `with voided as (update password_resets set used_at = $3 where user_id = $1 and used_at is null)
     insert into password_resets (user_id, token_hash, created_at, expires_at) values ($1, $2, $3, $4)`,
    [userId, tokenHash, at, expiresAt],
  );
}

/** Whether a token is unused, unexpired and of a live, enabled user, without locking it. */
export async function resetTokenUsable(tx: Queryable, tokenHash: string, at: Date): Promise<boolean> {
  const { rows } = await tx.query(
    `select 1 from password_resets r join users u on u.id = r.user_id and u.deleted_at is null and u.disabled_at is null
      where r.token_hash = $1 and r.used_at is null and r.expires_at > $2`,
    [tokenHash, at],
  );
  return rows.length > 0;
}

/**
 * Uses a token if it is unused and unexpired, and voids the user's other unused tokens, in one
 * statement; returns the token's user id, or null. Two uses of one token: the second waits on the
 * first's row lock, then finds it used.
 */
export async function useResetToken(tx: Queryable, tokenHash: string, at: Date): Promise<string | null> {
  const { rows } = await tx.query<{ user_id: string }>(
    `with used as (update password_resets set used_at = $2 where token_hash = $1 and used_at is null and expires_at > $2 returning user_id),
          voided as (update password_resets set used_at = $2
                      where user_id = (select user_id from used) and used_at is null and token_hash <> $1)
     select user_id from used`,
    [tokenHash, at],
  );
  return rows[0]?.user_id ?? null;
}
