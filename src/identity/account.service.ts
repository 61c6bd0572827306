// The signed-in user's own account (API.md §10): live sessions and ending them, MFA recovery codes,
// and changing one's own password. Every change here is effective at once on every instance: the
// caller caches are cleared through the invalidation bus.
import { createHash, randomBytes } from 'node:crypto';
import type { Database, Transaction } from '../db/database.js';
import { readTenant, SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { accessTokenInvalid, AppError, notFound } from '../errors.js';
import type { Caller } from '../http/auth.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import type { RequestMeta } from '../http/request-meta.js';
import { callerEvent, type RecordAudit } from '../audit/recorder.js';
import type { AuditAction } from '../audit/actions.js';
import type { CallerResolver } from './callers.js';
import { hashPassword, verifyPassword } from './passwords.js';
import * as sessions from './sessions.repo.js';
import * as users from './users.repo.js';

export const RECOVERY_CODE_COUNT = 10;
// Crockford's base32 without the letters people misread: 16 characters, 80 bits per code.
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstvwxyz0123456789';

/** xxxx-xxxx-xxxx-xxxx, from the platform's CSPRNG. */
export function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join('')).join('-');
}

/** What is stored and compared: case, spaces and dashes do not matter to the person typing it. */
export function recoveryCodeHash(code: string): string {
  return createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, '')).digest('hex');
}

export interface SessionView {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  ipAddress: string | null;
  userAgent: string | null;
  mfaVerified: boolean;
  sso: boolean;
  current: boolean;
}

/** Reserves a try at the caller's current password under the sign-in limits (AuthService). */
export type ReserveOwnPasswordAttempt = (userId: string, meta: RequestMeta) => Promise<{ user: users.UserRow | null; attemptId: string | null }>;

export function createAccountService(deps: {
  db: Database;
  callers: CallerResolver;
  recordAudit: RecordAudit;
  now: () => number;
  reserveOwnPasswordAttempt: ReserveOwnPasswordAttempt;
}) {
  const { db, callers, recordAudit, now } = deps;
  const system = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, SYSTEM_SCOPE, fn);

  const selfEvent = (caller: Caller, meta: RequestMeta, action: AuditAction, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: caller.orgId, action, resource: { type: 'user', id: caller.id, name: caller.name ?? null }, details });

  /** Routes of this service take user callers only (`via: ['jwt']`); a session id is always there. */
  function sessionOf(caller: Caller): string {
    if (!caller.sessionId) throw accessTokenInvalid();
    return caller.sessionId;
  }

  async function listSessions(caller: Caller, query: { page?: number; limit?: number; skipCount?: boolean }): Promise<PaginatedResult<SessionView>> {
    const current = sessionOf(caller);
    const page = pageOf(query);
    const { rows, total } = await readTenant(db, SYSTEM_SCOPE, (tx) => sessions.liveSessionsOf(tx, caller.id, new Date(now()), page));
    return paginated(rows.map((r) => ({
      id: r.id,
      createdAt: r.created_at.toISOString(),
      lastUsedAt: r.last_used_at.toISOString(),
      ipAddress: r.ip_address,
      userAgent: r.user_agent,
      mfaVerified: r.mfa_verified,
      sso: r.sso,
      current: r.id === current,
    })), page, total);
  }

  async function revokeSession(caller: Caller, sessionId: string, meta: RequestMeta): Promise<void> {
    const current = sessionOf(caller);
    const ended = await system(async (tx) => {
      if (!(await sessions.revokeOwnSession(tx, caller.id, sessionId, 'revoked by user', new Date(now())))) return false;
      await recordAudit(tx, selfEvent(caller, meta, 'user.session.revoke', { sessionId, current: sessionId === current }));
      return true;
    });
    // Another user's session, an ended one, or none at all: the same answer.
    if (!ended) throw notFound('Session');
    callers.announceChange('session revoked');
  }

  async function revokeOtherSessions(caller: Caller, meta: RequestMeta): Promise<{ success: true; revoked: number }> {
    const current = sessionOf(caller);
    const revoked = await system(async (tx) => {
      const n = await sessions.revokeOtherSessions(tx, caller.id, current, 'revoked by user: all others', new Date(now()));
      if (n > 0) await recordAudit(tx, selfEvent(caller, meta, 'user.session.revoke', { kept: current, revoked: n }));
      return n;
    });
    if (revoked > 0) callers.announceChange('sessions revoked');
    return { success: true, revoked };
  }

  /** Ten new codes, shown once; the earlier set stops working. The route demands an MFA-verified session. */
  async function newRecoveryCodes(caller: Caller, meta: RequestMeta): Promise<{ codes: string[] }> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await system(async (tx) => {
      const user = await users.findUserById(tx, caller.id, true);
      if (!user) throw accessTokenInvalid();
      if (!user.mfa_enabled) throw new AppError('CONFLICT', 'Enable MFA before creating recovery codes');
      await sessions.replaceRecoveryCodes(tx, user.id, codes.map(recoveryCodeHash), new Date(now()));
      await recordAudit(tx, selfEvent(caller, meta, 'user.mfa.recovery_codes', { count: codes.length }));
    });
    return { codes };
  }

  async function recoveryCodeStanding(caller: Caller): Promise<{ remaining: number; createdAt: string | null }> {
    const { remaining, created_at } = await system((tx) => sessions.recoveryCodeStanding(tx, caller.id));
    return { remaining, createdAt: created_at?.toISOString() ?? null };
  }

  /**
   * The current password proves it is the user at the keyboard, not someone holding a stolen
   * access token. Every other session ends; the current one stays.
   */
  async function changePassword(caller: Caller, input: { currentPassword: string; newPassword: string }, meta: RequestMeta): Promise<void> {
    const current = sessionOf(caller);
    // Counted as a sign-in attempt before the password is checked (429 past the sign-in limits).
    const { user, attemptId } = await deps.reserveOwnPasswordAttempt(caller.id, meta);
    if (!user) throw accessTokenInvalid();
    if (user.password_hash === null || attemptId === null) {
      throw new AppError('CONFLICT', 'This account signs in through its identity provider and has no password to change');
    }
    if (!(await verifyPassword(user.password_hash, input.currentPassword))) {
      await system(async (tx) => {
        await sessions.markAttemptFailed(tx, attemptId);
        await recordAudit(tx, {
          ...selfEvent(caller, meta, 'user.password.change', { reason: 'invalid_current_password' }),
          result: 'failure', errorMessage: 'The current password is wrong',
        });
      });
      throw new AppError('VALIDATION_FAILED', 'The current password is wrong', { errors: [{ path: '/currentPassword', message: 'does not match' }] });
    }
    const passwordHash = await hashPassword(input.newPassword);
    await system(async (tx) => {
      await sessions.deleteAttempt(tx, attemptId);
      const at = new Date(now());
      if (!(await users.updateUser(tx, user.id, { passwordHash }))) throw accessTokenInvalid();
      await sessions.revokeUserSessions(tx, user.id, 'password changed', at, current);
      await recordAudit(tx, selfEvent(caller, meta, 'user.password.change', { otherSessionsEnded: true }));
    });
    callers.announceChange('password changed');
  }

  return { listSessions, revokeSession, revokeOtherSessions, newRecoveryCodes, recoveryCodeStanding, changePassword };
}

export type AccountService = ReturnType<typeof createAccountService>;
