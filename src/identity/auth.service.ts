// Sign-in, MFA, refresh-token rotation and sign-out (API.md §3).
import type { Database, Queryable } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { AppError } from '../errors.js';
import type { Caller } from '../http/auth.js';
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

export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

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
  const { db, tokens, totp, callers, now } = deps;
  const system = <T>(fn: (tx: Queryable) => Promise<T>) => withTenant(db, SYSTEM_SCOPE, fn);
  const emailKey = (email: string) => email.trim().toLowerCase();

  /**
   * Reserves a slot among the sign-in attempts for an e-mail, or refuses with 429 once 10 failed
   * (or still-running) attempts fall within 15 minutes. The slot is settled by settleAttempt.
   */
  async function reserveAttempt(key: string): Promise<string> {
    return system(async (tx) => {
      await sessions.lockEmail(tx, key);
      const since = new Date(now() - LOGIN_WINDOW_MS);
      await sessions.pruneAttempts(tx, key, since);
      const recent = await sessions.recentAttempts(tx, key, since);
      if (recent.count >= LOGIN_MAX_FAILURES) {
        const retryAfter = Math.max(1, Math.ceil((recent.oldest!.getTime() + LOGIN_WINDOW_MS - now()) / 1000));
        throw new AppError('RATE_LIMITED', `Too many failed sign-in attempts for this account; try again in ${retryAfter} seconds`, {
          headers: { 'retry-after': String(retryAfter) },
        });
      }
      return sessions.insertAttempt(tx, key, new Date(now()));
    });
  }

  async function issueSession(tx: Queryable, user: UserRow, mfaVerified: boolean, meta: RequestMeta): Promise<SessionTokens> {
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
    return tokensFor(tx, user, sessionId, mfaVerified);
  }

  async function tokensFor(tx: Queryable, user: UserRow, sessionId: string, mfaVerified: boolean): Promise<SessionTokens> {
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
    const attemptId = await reserveAttempt(key);
    const user = await system((tx) => users.findUserByEmail(tx, key));
    if (!(await verifyPassword(user?.password_hash ?? null, password)) || !user) {
      await system((tx) => sessions.markAttemptFailed(tx, attemptId));
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
    const user = await system((tx) => users.findUserById(tx, userId));
    if (!user || !user.mfa_enabled || !user.mfa_secret) {
      throw new AppError('UNAUTHENTICATED', 'MFA token is invalid or expired; sign in again');
    }
    // Wrong codes count against the same 10-in-15-minutes limit as wrong passwords.
    const attemptId = await reserveAttempt(emailKey(user.email));
    const step = totp.matchStep(totp.open(user.mfa_secret), code, now());
    const outcome = await system(async (tx) => {
      if (step === null || !(await users.consumeMfaStep(tx, user.id, step))) {
        await sessions.markAttemptFailed(tx, attemptId);
        return step === null ? 'wrong' : 'replayed';
      }
      await sessions.deleteAttempt(tx, attemptId);
      return issueSession(tx, user, true, meta);
    });
    if (outcome === 'wrong') throw new AppError('MFA_INVALID', 'The authentication code is wrong or expired');
    if (outcome === 'replayed') throw new AppError('MFA_INVALID', 'This authentication code has already been used; wait for the next one');
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

  async function logout(refreshToken: string): Promise<void> {
    if (!REFRESH_TOKEN_PATTERN.test(refreshToken)) throw invalidRefreshToken();
    const found = await system(async (tx) => {
      const record = await sessions.lockRefreshToken(tx, hashRefreshToken(refreshToken));
      if (!record) return false;
      await sessions.revokeSession(tx, record.session_id, 'logout', new Date(now()));
      return true;
    });
    if (!found) throw invalidRefreshToken();
    callers.announceChange('session revoked: logout');
  }

  async function setupMfa(caller: Caller): Promise<{ secret: string; otpauthUrl: string }> {
    return system(async (tx) => {
      const user = await users.findUserById(tx, caller.id);
      if (!user) throw new AppError('UNAUTHENTICATED', 'Access token is invalid or expired');
      if (user.mfa_enabled) throw new AppError('CONFLICT', 'MFA is already enabled for this account');
      const fresh = totp.newSecret(user.email);
      await users.setPendingMfaSecret(tx, user.id, totp.seal(fresh.secret));
      return fresh;
    });
  }

  async function enableMfa(caller: Caller, code: string): Promise<{ mfaEnabled: true }> {
    await system(async (tx) => {
      const user = await users.findUserById(tx, caller.id);
      if (!user) throw new AppError('UNAUTHENTICATED', 'Access token is invalid or expired');
      if (user.mfa_enabled) throw new AppError('CONFLICT', 'MFA is already enabled for this account');
      if (!user.mfa_pending_secret) {
        throw new AppError('CONFLICT', 'No MFA setup in progress: call POST /api/v1/auth/mfa/setup first');
      }
      const step = totp.matchStep(totp.open(user.mfa_pending_secret), code, now());
      if (step === null) throw new AppError('MFA_INVALID', 'The authentication code is wrong or expired');
      // The enabling code counts as used (RFC 6238 §5.2): it cannot sign in afterwards.
      await users.activateMfa(tx, user.id, step);
    });
    callers.announceChange('mfa enabled');
    return { mfaEnabled: true };
  }

  return { login, verifyMfa, refresh, logout, setupMfa, enableMfa };
}

export type AuthService = ReturnType<typeof createAuthService>;
