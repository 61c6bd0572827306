// SQL for sessions, refresh tokens, sign-in attempts and the caller record. Always run in the
// system scope: these tables are the service's own bookkeeping.
import type { Queryable } from '../db/database.js';
import { queryPage } from '../db/pages.js';
import type { Role } from './permissions.js';
import { userColumns, type OrgAccess, type UserRow, type UserScope } from './users.repo.js';

/** The user a session speaks for, as tokens and sign-in events need it. */
export type SessionUser = Pick<UserRow, 'id' | 'email' | 'name' | 'scope' | 'partner_id' | 'org_id' | 'role' | 'mfa_enabled'>;

const SESSION_USER = `case when u.id is null then null else json_build_object('id', u.id, 'email', u.email, 'name', u.name,
  'scope', u.scope, 'partner_id', u.partner_id, 'org_id', u.org_id, 'role', u.role, 'mfa_enabled', u.mfa_enabled) end`;

/**
 * A successful sign-in, in one statement: its attempt settled (deleted; none for sign-ins that
 * reserve no attempt: an accepted invitation, single sign-on), the user's last sign-in recorded,
 * the session and its first refresh token stored. Returns the session's id.
 */
export async function startSession(
  tx: Queryable,
  s: { attemptId: string | null; userId: string; mfaVerified: boolean; sso: boolean; ip: string | null; userAgent: string | null; at: Date; expiresAt: Date; refreshTokenHash: string; refreshExpiresAt: Date },
): Promise<string> {
  const { rows } = await tx.query<{ id: string }>(
    `with settled as (delete from login_attempts where id = $1),
          touched as (update users set last_login_at = $6 where id = $2),
          session as (insert into sessions (user_id, mfa_verified, ip_address, user_agent, created_at, last_used_at, expires_at, sso)
                      values ($2, $3, $4, $5, $6, $6, $7, $10) returning id),
          token as (insert into refresh_tokens (session_id, token_hash, created_at, expires_at) select id, $8, $6, $9 from session)
     select id from session`,
    [s.attemptId, s.userId, s.mfaVerified, s.ip, s.userAgent, s.at, s.expiresAt, s.refreshTokenHash, s.refreshExpiresAt, s.sso],
  );
  return rows[0]!.id;
}

export interface RefreshTokenRecord {
  id: string;
  session_id: string;
  spent_at: Date | null;
  expires_at: Date;
  mfa_verified: boolean;
  session_revoked_at: Date | null;
  session_expires_at: Date;
  /** The session's user, null when it has been deleted. */
  user: SessionUser | null;
}

/**
 * Locks the token and its session, so two refreshes with one token are decided one after the
 * other; brings the session's live user along.
 */
export async function lockRefreshToken(tx: Queryable, tokenHash: string): Promise<RefreshTokenRecord | null> {
  const { rows } = await tx.query<RefreshTokenRecord>(
    `select rt.id, rt.session_id, rt.spent_at, rt.expires_at, s.mfa_verified,
            s.revoked_at as session_revoked_at, s.expires_at as session_expires_at, ${SESSION_USER} as user
       from refresh_tokens rt join sessions s on s.id = rt.session_id
       left join users u on u.id = s.user_id and u.deleted_at is null and u.disabled_at is null
      where rt.token_hash = $1
      for update of rt, s`,
    [tokenHash],
  );
  return rows[0] ?? null;
}

/** Rotation: the presented token is spent and its successor stored, and the session marked used, in one statement. */
export async function rotateRefreshToken(tx: Queryable, spentId: string, sessionId: string, tokenHash: string, at: Date, expiresAt: Date): Promise<void> {
  await tx.query(
    `with spent as (update refresh_tokens set spent_at = $3 where id = $1),
          used as (update sessions set last_used_at = $3 where id = $2)
     insert into refresh_tokens (session_id, token_hash, created_at, expires_at) values ($2, $4, $3, $5)`,
    [spentId, sessionId, at, tokenHash, expiresAt],
  );
}

/**
 * Sign-out: ends the session of a refresh token (locked with its session, like a refresh) unless it
 * has ended already, in one statement. Returns the session and its live user; null for an unknown token.
 */
export async function endSessionOfToken(tx: Queryable, tokenHash: string, at: Date): Promise<{ session_id: string; user: SessionUser | null } | null> {
  const { rows } = await tx.query<{ session_id: string; user: SessionUser | null }>(
    `with t as (select rt.session_id, s.user_id from refresh_tokens rt join sessions s on s.id = rt.session_id
                 where rt.token_hash = $1 for update of rt, s),
          ended as (update sessions set revoked_at = $2, revoked_reason = 'logout' where id = (select session_id from t) and revoked_at is null)
     select t.session_id, ${SESSION_USER} as user from t left join users u on u.id = t.user_id and u.deleted_at is null`,
    [tokenHash, at],
  );
  return rows[0] ?? null;
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
 * Serialises attempts from one client address, then those for one e-mail, until the transaction
 * ends: one statement, the address's lock always first (the inner select runs before the outer one
 * can), in the two-key advisory space so it can never collide with an e-mail's lock. With
 * `withUser`, also reads the live user of that e-mail. Counts must come in a later statement: a statement
 * sees what was committed when it started, before the locks were granted.
 */
export async function lockSignIn(tx: Queryable, clientKey: string, emailKey: string, withUser: boolean): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(
    `select ${userColumns('u')}
       from (select pg_advisory_xact_lock(hashtext('login:' || $2))
               from (select pg_advisory_xact_lock(hashtext('login-client'), hashtext($1))) address) locks
       left join users u on $3 and lower(u.email) = lower($2) and u.deleted_at is null`,
    [clientKey, emailKey, withUser],
  );
  return rows[0]?.id ? rows[0] : null;
}

/** Serialises attempts from one client address until the transaction ends (the two-key space, as lockSignIn). */
export async function lockClient(tx: Queryable, clientKey: string): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('login-client'), hashtext($1))`, [clientKey]);
}

export interface AttemptCount {
  count: number;
  oldest: Date | null;
}

export interface Reservation {
  /** Every attempt from the address in the window, whatever its outcome. */
  fromClient: AttemptCount;
  /** Failed and still-running attempts for the e-mail in the window (refusals do not extend its lock). */
  forEmail: AttemptCount;
  /** The attempt recorded: 'pending' (a slot), 'refused' (the e-mail is over its limit), or none (the address is). */
  attempt: { id: string; outcome: 'pending' | 'refused' } | null;
}

/**
 * One sign-in attempt's reservation, in one statement taken under lockSignIn: the e-mail's attempts
 * older than the window are pruned, the address's and the e-mail's attempts in the window counted
 * (the new one not among them), and the attempt recorded, unless the address is over its limit.
 */
export async function reserveAttempt(
  tx: Queryable,
  a: { emailKey: string; clientKey: string; since: Date; at: Date; addressMax: number; emailMax: number },
): Promise<Reservation> {
  const { rows } = await tx.query<{ client_count: number; client_oldest: Date | null; email_count: number; email_oldest: Date | null; attempt_id: string | null; outcome: 'pending' | 'refused' | null }>(
    `with pruned as (delete from login_attempts where email_key = $1 and attempted_at <= $3),
          counts as (
            select c.n as client_count, c.oldest as client_oldest, e.n as email_count, e.oldest as email_oldest
              from (select count(*)::int as n, min(attempted_at) as oldest from login_attempts
                     where client_key = $2 and attempted_at > $3) c,
                   (select count(*)::int as n, min(attempted_at) as oldest from login_attempts
                     where email_key = $1 and attempted_at > $3 and outcome <> 'refused') e),
          attempt as (
            insert into login_attempts (email_key, client_key, attempted_at, outcome)
            select $1, $2, $4, case when email_count >= $6 then 'refused' else 'pending' end from counts where client_count < $5
            returning id, outcome)
     select counts.*, attempt.id as attempt_id, attempt.outcome from counts left join attempt on true`,
    [a.emailKey, a.clientKey, a.since, a.at, a.addressMax, a.emailMax],
  );
  const r = rows[0]!;
  return {
    fromClient: { count: r.client_count, oldest: r.client_oldest },
    forEmail: { count: r.email_count, oldest: r.email_oldest },
    attempt: r.attempt_id ? { id: r.attempt_id, outcome: r.outcome! } : null,
  };
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

/** Deletes up to `limit` attempts made before `before`, whatever their e-mail or address. */
export async function deleteAttemptsBefore(tx: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await tx.query(
    `delete from login_attempts where id in (select id from login_attempts where attempted_at < $1 limit $2)`,
    [before, limit],
  );
  return rowCount;
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
       join users u on u.id = s.user_id and u.deleted_at is null and u.disabled_at is null
       left join partners p on p.id = u.partner_id
       left join organizations o on o.id = u.org_id
      where s.id = $1`,
    [sessionId],
  );
  return rows[0] ?? null;
}

// --- the session list (API.md §10) ---------------------------------------------------------------

export interface LiveSessionRow {
  id: string;
  created_at: Date;
  last_used_at: Date;
  ip_address: string | null;
  user_agent: string | null;
  mfa_verified: boolean;
  sso: boolean;
}

/**
 * A session is live while it is neither ended nor past its last day, and its newest refresh token
 * is still good: a session left idle longer than a refresh token lasts can never be used again.
 * `at` is the placeholder of the moment to judge at.
 */
function live(at: string): string {
  return `revoked_at is null and expires_at > ${at}
    and exists (select 1 from refresh_tokens rt where rt.session_id = sessions.id and rt.spent_at is null and rt.expires_at > ${at})`;
}

/** A page of the user's live sessions, most recently used first, and (withTotal) how many there are. */
export function liveSessionsOf(
  tx: Queryable, userId: string, at: Date, page: { limit: number; offset: number; withTotal: boolean },
): Promise<{ rows: LiveSessionRow[]; total: number | null }> {
  const from = `from sessions where user_id = $1 and ${live('$2')}`;
  return queryPage<LiveSessionRow>(tx, {
    rows: `select id, created_at, last_used_at, ip_address, user_agent, mfa_verified, sso ${from}
            order by last_used_at desc, id desc limit $3 offset $4`,
    count: page.withTotal ? `select count(*)::int ${from}` : null,
    params: [userId, at, page.limit, page.offset],
  });
}

/** Ends one live session of the user; false when the user has no such live session. */
export async function revokeOwnSession(tx: Queryable, userId: string, sessionId: string, reason: string, at: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `update sessions set revoked_at = $3, revoked_reason = $4
      where id = $2 and user_id = $1 and ${live('$3')}`,
    [userId, sessionId, at, reason],
  );
  return rowCount > 0;
}

/** Ends every live session of the user but one; returns how many ended. */
export async function revokeOtherSessions(tx: Queryable, userId: string, keepSessionId: string, reason: string, at: Date): Promise<number> {
  const { rowCount } = await tx.query(
    `update sessions set revoked_at = $3, revoked_reason = $4
      where user_id = $1 and id <> $2 and ${live('$3')}`,
    [userId, keepSessionId, at, reason],
  );
  return rowCount;
}

// --- MFA recovery codes ----------------------------------------------------------------------------

/** Replaces the user's recovery codes with these (hashes). */
export async function replaceRecoveryCodes(tx: Queryable, userId: string, codeHashes: string[], at: Date): Promise<void> {
  await tx.query(
    `with cleared as (delete from mfa_recovery_codes where user_id = $1)
     insert into mfa_recovery_codes (user_id, code_hash, created_at) select $1, h, $3 from unnest($2::text[]) h`,
    [userId, codeHashes, at],
  );
}

/** How many of the user's recovery codes are unused, and when the set was made (null: no set). */
export async function recoveryCodeStanding(tx: Queryable, userId: string): Promise<{ remaining: number; created_at: Date | null }> {
  const { rows } = await tx.query<{ remaining: number; created_at: Date | null }>(
    `select count(*) filter (where used_at is null)::int as remaining, max(created_at) as created_at from mfa_recovery_codes where user_id = $1`,
    [userId],
  );
  return rows[0]!;
}

/** Spends one unused recovery code of the user; returns how many unused ones are left, or null when it matched none. */
export async function spendRecoveryCode(tx: Queryable, userId: string, codeHash: string, at: Date): Promise<number | null> {
  const { rows } = await tx.query<{ left: number }>(
    `with spent as (update mfa_recovery_codes set used_at = $3
                     where id = (select id from mfa_recovery_codes where user_id = $1 and code_hash = $2 and used_at is null limit 1 for update)
                     returning id)
     select (select count(*)::int from mfa_recovery_codes where user_id = $1 and used_at is null) - 1 as left from spent`,
    [userId, codeHash, at],
  );
  return rows[0]?.left ?? null;
}
