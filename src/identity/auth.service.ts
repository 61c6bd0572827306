// Sign-in, MFA, refresh-token rotation and sign-out (API.md §3).
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { accessTokenInvalid, AppError, mfaCodeInvalid, mfaTokenInvalid } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { actorOf, type AuditEvent, type RecordAudit } from '../audit/recorder.js';
import type { CallerResolver } from './callers.js';
import { verifyPassword } from './passwords.js';
import { permissionsOf, type Permission, type Role } from './permissions.js';
export type { Me } from './schemas.js';
import * as sessions from './sessions.repo.js';
import { ACCESS_TOKEN_TTL_SECONDS, hashRefreshToken, newRefreshToken, type TokenService } from './tokens.js';
import type { TotpService } from './totp.js';
import type { Me } from './schemas.js';
import * as users from './users.repo.js';
import type { UserRow } from './users.repo.js';

export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
export const LOGIN_MAX_FAILURES = 10;
const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
const REFRESH_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;
const REFRESH_TOKEN_PATTERN = /^rt_[A-Za-z0-9_-]{43}$/;

export type { RequestMeta } from '../http/request-meta.js';

export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  user: Me;
}

export type LoginResult = SessionTokens | { mfaRequired: true; mfaToken: string };

export interface AuthServiceDeps {
  db: Database;
  tokens: TokenService;
  totp: TotpService;
  callers: CallerResolver;
  recordAudit: RecordAudit;
  now: () => number;
}

export function meOf(caller: Caller): Me {
  return {
    id: caller.id,
    email: caller.email ?? '',
    name: caller.name ?? '',
    scope: caller.scope,
    partnerId: caller.partnerId,
    orgId: caller.orgId,
    role: caller.role as Role,
    permissions: [...caller.permissions].sort() as Permission[],
    mfaEnabled: caller.mfaEnabled,
    mfaVerified: caller.mfaVerified,
  };
}

const invalidCredentials = () => new AppError('UNAUTHENTICATED', 'Invalid email or password');
const invalidRefreshToken = () => new AppError('UNAUTHENTICATED', 'Refresh token is invalid, expired or revoked');

export function createAuthService(deps: AuthServiceDeps) {
  const { db, tokens, totp, callers, recordAudit, now } = deps;
  const system = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, SYSTEM_SCOPE, fn);
  const emailKey = (email: string) => email.trim().toLowerCase();

  /** A sign-in event: in the user's organization chain when it has one, else the platform chain. */
  function loginEvent(
    action: 'user.login' | 'user.login.failed' | 'user.logout' | 'user.mfa.enable',
    user: Pick<UserRow, 'id' | 'email' | 'name' | 'org_id'> | null,
    attemptedEmail: string,
    meta: RequestMeta,
    outcome: { result?: 'failure' | 'denied'; reason?: string; error?: string; details?: Record<string, unknown> } = {},
  ): AuditEvent {
    return {
      orgId: user?.org_id ?? null,
      actor: { type: 'user', id: user?.id ?? null, email: user?.email ?? attemptedEmail },
      action,
      resource: { type: 'user', id: user?.id ?? null, name: user?.name ?? null },
      details: { ...(action === 'user.login.failed' ? { email: attemptedEmail } : {}), ...(outcome.reason ? { reason: outcome.reason } : {}), ...outcome.details },
      ip: meta.ip,
      userAgent: meta.userAgent,
      ...(outcome.result ? { result: outcome.result, errorMessage: outcome.error ?? null } : {}),
    };
  }

  /**
   * Reserves a slot among the sign-in attempts for an e-mail, or refuses with 429 once 10 failed
   * (or still-running) attempts fall within 15 minutes; the refusal is audited. The slot is
   * settled by the caller: deleted on success, marked failed otherwise.
   */
  async function reserveAttempt(key: string, meta: RequestMeta): Promise<{ attemptId: string; user: UserRow | null }> {
    const outcome = await system(async (tx) => {
      await sessions.lockEmail(tx, key);
      const since = new Date(now() - LOGIN_WINDOW_MS);
      await sessions.pruneAttempts(tx, key, since);
      const recent = await sessions.recentAttempts(tx, key, since);
      const user = await users.findUserByEmail(tx, key);
      if (recent.count >= LOGIN_MAX_FAILURES) {
        const retryAfter = Math.max(1, Math.ceil((recent.oldest!.getTime() + LOGIN_WINDOW_MS - now()) / 1000));
        await recordAudit(tx, loginEvent('user.login.failed', user, key, meta, { result: 'denied', reason: 'too_many_attempts', error: 'Too many failed sign-in attempts' }));
        return { retryAfter };
      }
      return { attemptId: await sessions.insertAttempt(tx, key, new Date(now())), user };
    });
    if ('retryAfter' in outcome) {
      throw new AppError('RATE_LIMITED', `Too many failed sign-in attempts for this account; try again in ${outcome.retryAfter} seconds`, {
        headers: { 'retry-after': String(outcome.retryAfter) },
      });
    }
    return outcome;
  }

  async function issueSession(tx: Transaction, user: UserRow, mfaVerified: boolean, meta: RequestMeta): Promise<SessionTokens> {
    const at = new Date(now());
    const sessionId = await sessions.insertSession(tx, {
      userId: user.id,
      mfaVerified,
      ip: meta.ip,
      userAgent: meta.userAgent?.slice(0, 1000) ?? null,
      createdAt: at,
      expiresAt: new Date(at.getTime() + SESSION_TTL_MS),
    });
    await users.touchLastLogin(tx, user.id, at);
    await recordAudit(tx, loginEvent('user.login', user, user.email, meta, { details: { mfa: mfaVerified, sessionId } }));
    return tokensFor(tx, user, sessionId, mfaVerified);
  }

  async function tokensFor(tx: Transaction, user: UserRow, sessionId: string, mfaVerified: boolean): Promise<SessionTokens> {
    const refreshToken = newRefreshToken();
    const at = new Date(now());
    await sessions.insertRefreshToken(tx, sessionId, hashRefreshToken(refreshToken), at, new Date(at.getTime() + REFRESH_TOKEN_TTL_MS));
    const accessToken = await tokens.signAccess({ userId: user.id, sessionId, mfaVerified });
    return {
      accessToken,
      refreshToken,
      expiresIn: ACCESS_TOKEN_TTL_SECONDS,
      user: {
        id: user.id,
        email: user.email,
        name: user.name,
        scope: user.scope,
        partnerId: user.partner_id,
        orgId: user.org_id,
        role: user.role,
        permissions: [...permissionsOf(user.role)].sort(),
        mfaEnabled: user.mfa_enabled,
        mfaVerified,
      },
    };
  }

  async function login(email: string, password: string, meta: RequestMeta): Promise<LoginResult> {
    const key = emailKey(email);
    const { attemptId, user } = await reserveAttempt(key, meta);
    if (!(await verifyPassword(user?.password_hash ?? null, password)) || !user) {
      await system(async (tx) => {
        await sessions.markAttemptFailed(tx, attemptId);
        await recordAudit(tx, loginEvent('user.login.failed', user, key, meta, { result: 'failure', reason: 'invalid_credentials', error: 'Invalid email or password' }));
      });
      throw invalidCredentials();
    }
    if (user.mfa_enabled) {
      await system((tx) => sessions.deleteAttempt(tx, attemptId));
      return { mfaRequired: true, mfaToken: await tokens.signMfaChallenge(user.id) };
    }
    return system(async (tx) => {
      await sessions.deleteAttempt(tx, attemptId);
      return issueSession(tx, user, false, meta);
    });
  }

  async function verifyMfa(mfaToken: string, code: string, meta: RequestMeta): Promise<SessionTokens> {
    const userId = await tokens.verifyMfaChallenge(mfaToken);
    const found = await system((tx) => users.findUserById(tx, userId));
    if (!found || !found.mfa_enabled || !found.mfa_secret) throw mfaTokenInvalid();
    // Wrong codes count against the same 10-in-15-minutes limit as wrong passwords.
    const { attemptId } = await reserveAttempt(emailKey(found.email), meta);
    const step = totp.matchStep(totp.open(found.mfa_secret), code, now());
    const outcome = await system(async (tx) => {
      if (step === null || !(await users.consumeMfaStep(tx, found.id, step))) {
        const reason = step === null ? 'mfa_invalid' : 'mfa_replayed';
        await sessions.markAttemptFailed(tx, attemptId);
        await recordAudit(tx, loginEvent('user.login.failed', found, found.email, meta, { result: 'failure', reason, error: 'Invalid authentication code' }));
        return reason;
      }
      await sessions.deleteAttempt(tx, attemptId);
      return issueSession(tx, found, true, meta);
    });
    if (outcome === 'mfa_invalid') throw mfaCodeInvalid();
    if (outcome === 'mfa_replayed') throw new AppError('MFA_INVALID', 'This authentication code has already been used; wait for the next one');
    return outcome;
  }

  async function refresh(refreshToken: string): Promise<SessionTokens> {
    if (!REFRESH_TOKEN_PATTERN.test(refreshToken)) throw invalidRefreshToken();
    const outcome = await system(async (tx) => {
      const record = await sessions.lockRefreshToken(tx, hashRefreshToken(refreshToken));
      if (!record) return 'invalid' as const;
      const at = new Date(now());
      if (record.spent_at !== null) {
        // A spent token came back: someone holds a copy. End the whole family.
        await sessions.revokeSession(tx, record.session_id, 'refresh_token_reuse', at);
        return 'reused' as const;
      }
      if (record.session_revoked_at !== null || record.session_expires_at <= at || record.expires_at <= at) return 'invalid' as const;
      const user = await users.findUserById(tx, record.user_id);
      if (!user) return 'invalid' as const;
      await sessions.spendRefreshToken(tx, record.id, at);
      return tokensFor(tx, user, record.session_id, record.mfa_verified);
    });
    if (outcome === 'reused') {
      callers.announceChange('session revoked: refresh token reuse');
      throw new AppError('UNAUTHENTICATED', 'Refresh token was already used; the session has been revoked, sign in again');
    }
    if (outcome === 'invalid') throw invalidRefreshToken();
    return outcome;
  }

  async function logout(refreshToken: string, meta: RequestMeta): Promise<void> {
    if (!REFRESH_TOKEN_PATTERN.test(refreshToken)) throw invalidRefreshToken();
    const found = await system(async (tx) => {
      const record = await sessions.lockRefreshToken(tx, hashRefreshToken(refreshToken));
      if (!record) return false;
      await sessions.revokeSession(tx, record.session_id, 'logout', new Date(now()));
      const user = await users.findUserById(tx, record.user_id);
      if (user) await recordAudit(tx, loginEvent('user.logout', user, user.email, meta, { details: { sessionId: record.session_id } }));
      return true;
    });
    if (!found) throw invalidRefreshToken();
    callers.announceChange('session revoked: logout');
  }

  /** The caller's own user, which MFA is being set up for: it must not have MFA already. */
  async function userWithoutMfa(tx: Transaction, caller: Caller) {
    const user = await users.findUserById(tx, caller.id);
    if (!user) throw accessTokenInvalid();
    if (user.mfa_enabled) throw new AppError('CONFLICT', 'MFA is already enabled for this account');
    return user;
  }

  async function setupMfa(caller: Caller): Promise<{ secret: string; otpauthUrl: string }> {
    return system(async (tx) => {
      const user = await userWithoutMfa(tx, caller);
      const fresh = totp.newSecret(user.email);
      await users.setPendingMfaSecret(tx, user.id, totp.seal(fresh.secret));
      return fresh;
    });
  }

  async function enableMfa(caller: Caller, code: string, meta: RequestMeta): Promise<{ mfaEnabled: true }> {
    await system(async (tx) => {
      const user = await userWithoutMfa(tx, caller);
      if (!user.mfa_pending_secret) {
        throw new AppError('CONFLICT', 'No MFA setup in progress: call POST /api/v1/auth/mfa/setup first');
      }
      const step = totp.matchStep(totp.open(user.mfa_pending_secret), code, now());
      if (step === null) throw mfaCodeInvalid();
      // The enabling code counts as used (RFC 6238 §5.2): it cannot sign in afterwards.
      await users.activateMfa(tx, user.id, step);
      await recordAudit(tx, { ...loginEvent('user.mfa.enable', user, user.email, meta), actor: actorOf(caller) });
    });
    callers.announceChange('mfa enabled');
    return { mfaEnabled: true };
  }

  return { login, verifyMfa, refresh, logout, setupMfa, enableMfa };
}

export type AuthService = ReturnType<typeof createAuthService>;
