// SQL for sessions, refresh tokens, sign-in attempts and the caller record. Always run in the
// system scope: these tables are the service's own bookkeeping.
import type { Queryable } from '../db/database.js';
import type { Role } from './permissions.js';
import type { OrgAccess, UserScope } from './users.repo.js';

export async function insertSession(
  tx: Queryable,
  s: { userId: string; mfaVerified: boolean; ip: string | null; userAgent: string | null; createdAt: Date; expiresAt: Date },
): Promise<string> {
  const { rows } = await tx.query<{ id: string }>(
    `insert into sessions (user_id, mfa_verified, ip_address, user_agent, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6) returning id`,
    [s.userId, s.mfaVerified, s.ip, s.userAgent, s.createdAt, s.expiresAt],
  );
  return rows[0]!.id;
}

export async function insertRefreshToken(tx: Queryable, sessionId: string, tokenHash: string, createdAt: Date, expiresAt: Date): Promise<void> {
  await tx.query(
    `insert into refresh_tokens (session_id, token_hash, created_at, expires_at) values ($1, $2, $3, $4)`,
    [sessionId, tokenHash, createdAt, expiresAt],
  );
}

export interface RefreshTokenRecord {
  id: string;
  session_id: string;
  spent_at: Date | null;
  expires_at: Date;
  user_id: string;
  mfa_verified: boolean;
  session_revoked_at: Date | null;
  session_expires_at: Date;
}

/** Locks the token and its session, so two refreshes with one token are decided one after the other. */
export async function lockRefreshToken(tx: Queryable, tokenHash: string): Promise<RefreshTokenRecord | null> {
  const { rows } = await tx.query<RefreshTokenRecord>(
    `select rt.id, rt.session_id, rt.spent_at, rt.expires_at, s.user_id, s.mfa_verified,
            s.revoked_at as session_revoked_at, s.expires_at as session_expires_at
       from refresh_tokens rt join sessions s on s.id = rt.session_id
      where rt.token_hash = $1
      for update of rt, s`,
    [tokenHash],
  );
  return rows[0] ?? null;
}

export async function spendRefreshToken(tx: Queryable, id: string, at: Date): Promise<void> {
  await tx.query(`update refresh_tokens set spent_at = $2 where id = $1`, [id, at]);
}

export async function revokeSession(tx: Queryable, id: string, reason: string, at: Date): Promise<void> {
  await tx.query(`update sessions set revoked_at = $2, revoked_reason = $3 where id = $1 and revoked_at is null`, [id, at, reason]);
}

export async function revokeUserSessions(tx: Queryable, userId: string, reason: string, at: Date, keepSessionId: string | null): Promise<void> {
  await tx.query(
    `update sessions set revoked_at = $2, revoked_reason = $3
      where user_id = $1 and revoked_at is null and id is distinct from $4`,
    [userId, at, reason, keepSessionId],
  );
}

/** Deletes up to `limit` sessions that expired or were revoked before `before` (their refresh tokens go with them). */
export async function deleteEndedSessions(tx: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await tx.query(
    `delete from sessions where id in (
       select id from sessions where expires_at < $1
       union
       select id from sessions where revoked_at < $1
       limit $2)`,
    [before, limit],
  );
  return rowCount;
}

// --- sign-in attempts -------------------------------------------------------------------------
// One row per attempt, keyed by e-mail and by client address: 'pending' while the password is
// checked, 'failed' after, 'refused' when the per-account limit turned it away. Success deletes it.

/**
 * Serialises attempts from one client address until the transaction ends. Taken before lockEmail,
 * always, and in the two-key advisory space, so it can never collide with an e-mail's lock.
 */
export async function lockClient(tx: Queryable, clientKey: string): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('login-client'), hashtext($1))`, [clientKey]);
}

/** Serialises attempts for one e-mail until the transaction ends. */
export async function lockEmail(tx: Queryable, emailKey: string): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('login:' || $1))`, [emailKey]);
}

export interface AttemptCount {
  count: number;
  oldest: Date | null;
}

/** Failed and still-running attempts for an e-mail (refusals do not extend its lock). */
export async function recentAttempts(tx: Queryable, emailKey: string, since: Date): Promise<AttemptCount> {
  const { rows } = await tx.query<AttemptCount>(
    `select count(*)::int as count, min(attempted_at) as oldest from login_attempts
      where email_key = $1 and attempted_at > $2 and outcome <> 'refused'`,
    [emailKey, since],
  );
  return rows[0]!;
}

/** Every attempt from a client address, whatever its outcome. */
export async function recentAttemptsFrom(tx: Queryable, clientKey: string, since: Date): Promise<AttemptCount> {
  const { rows } = await tx.query<AttemptCount>(
    `select count(*)::int as count, min(attempted_at) as oldest from login_attempts
      where client_key = $1 and attempted_at > $2`,
    [clientKey, since],
  );
  return rows[0]!;
}

/** Failed sign-ins from a client address, in the window, for e-mails no live user has. */
export async function unknownEmailFailuresFrom(tx: Queryable, clientKey: string, since: Date): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `select count(*)::int as n from login_attempts a
      where a.client_key = $1 and a.attempted_at > $2 and a.outcome = 'failed'
        and not exists (select 1 from users u where lower(u.email) = a.email_key and u.deleted_at is null)`,
    [clientKey, since],
  );
  return rows[0]!.n;
}

export async function pruneAttempts(tx: Queryable, emailKey: string, before: Date): Promise<void> {
  await tx.query(`delete from login_attempts where email_key = $1 and attempted_at <= $2`, [emailKey, before]);
}

/** Deletes up to `limit` attempts made before `before`, whatever their e-mail or address. */
export async function deleteAttemptsBefore(tx: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await tx.query(
    `delete from login_attempts where id in (select id from login_attempts where attempted_at < $1 limit $2)`,
    [before, limit],
  );
  return rowCount;
}

export async function insertAttempt(tx: Queryable, emailKey: string, clientKey: string, at: Date, outcome: 'pending' | 'refused'): Promise<string> {
  const { rows } = await tx.query<{ id: string }>(
    `insert into login_attempts (email_key, client_key, attempted_at, outcome) values ($1, $2, $3, $4) returning id`,
    [emailKey, clientKey, at, outcome],
  );
  return rows[0]!.id;
}

export async function markAttemptFailed(tx: Queryable, id: string): Promise<void> {
  await tx.query(`update login_attempts set outcome = 'failed' where id = $1`, [id]);
}

export async function deleteAttempt(tx: Queryable, id: string): Promise<void> {
  await tx.query(`delete from login_attempts where id = $1`, [id]);
}

// --- the caller behind an access token ---------------------------------------------------------

export interface CallerRecord {
  id: string;
  email: string;
  name: string;
  scope: UserScope;
  partner_id: string | null;
  org_id: string | null;
  role: Role;
  org_access: OrgAccess;
  mfa_enabled: boolean;
  session_revoked_at: Date | null;
  session_expires_at: Date;
  partner_status: string | null;
  org_status: string | null;
  org_ids: string[];
}

/** The user behind a session, with partner/org status and the organizations the user reaches. */
export async function loadCallerRecord(tx: Queryable, sessionId: string): Promise<CallerRecord | null> {
  const { rows } = await tx.query<CallerRecord>(
    `select u.id, u.email, u.name, u.scope, u.partner_id, u.org_id, u.role, u.org_access, u.mfa_enabled,
            s.revoked_at as session_revoked_at, s.expires_at as session_expires_at,
            case when p.id is null then null when p.deleted_at is not null then 'deleted' else p.status end as partner_status,
            case when o.id is null then null when o.deleted_at is not null then 'deleted' else o.status end as org_status,
            case
              when u.scope = 'partner' and u.org_access = 'all' then
                array(select x.id from organizations x where x.partner_id = u.partner_id and x.deleted_at is null order by x.id)
              when u.scope = 'partner' and u.org_access = 'selected' then
                array(select x.id from organizations x
                       where x.id = any (u.org_ids) and x.partner_id = u.partner_id and x.deleted_at is null order by x.id)
              when u.scope = 'organization' then
                array(select x.id from organizations x where x.id = u.org_id and x.deleted_at is null)
              else '{}'::uuid[]
            end as org_ids
       from sessions s
       join users u on u.id = s.user_id and u.deleted_at is null
       left join partners p on p.id = u.partner_id
       left join organizations o on o.id = u.org_id
      where s.id = $1`,
    [sessionId],
  );
  return rows[0] ?? null;
}
