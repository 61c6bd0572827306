// Sign-in, MFA, refresh-token rotation and sign-out (API.md §3).
import { isIP } from 'node:net';
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { accessTokenInvalid, accountDisabled, AppError, mfaCodeInvalid, mfaTokenInvalid } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { actorOf, type RecordAudit } from '../audit/recorder.js';
import type { CallerResolver } from './callers.js';
import { verifyPassword } from './passwords.js';
import { permissionsOf, type Permission, type Role } from './permissions.js';
export type { Me } from './schemas.js';
import * as sessions from './sessions.repo.js';
import { createSignInGate, isRefusal, type Refusal } from './sign-in-gate.js';
import { hashRefreshToken, newRefreshToken, type TokenService } from './tokens.js';
import { REFRESH_TOKEN_TTL_MS, signInEvent, type SessionIssuer, type SessionTokens } from './session-issuer.js';
import type { TotpService } from './totp.js';
import type { Me } from './schemas.js';
import * as users from './users.repo.js';
import { recoveryCodeHash } from './account.service.js';
import type { UserRow } from './users.repo.js';

export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
export const LOGIN_MAX_FAILURES = 10;
/**
 * Failed (or running, or account-refused) attempts one client address may make per 15-minute
 * window, whatever the e-mail. Successes do not count, so an office behind one NAT (or a client's
 * test suite) reaches it only with 100 failures in a quarter of an hour; a flood reaches it at once
 * and is then turned away before any password is hashed.
 */
export const ADDRESS_MAX_FAILURES = 100;
/**
 * Failures for e-mails nobody has that are chained per address and window (API.md §8: they belong
 * to the platform chain); past it they are only counted, so strangers cannot grow the chain.
 */
export const UNKNOWN_EMAIL_AUDITS_PER_ADDRESS = 10;
const REFRESH_TOKEN_PATTERN = /^rt_[A-Za-z0-9_-]{43}$/;

export type { RequestMeta } from '../http/request-meta.js';

export type { SessionTokens } from './session-issuer.js';

/** The second factor of a sign-in: a TOTP code, or one of the user's recovery codes. */
export type MfaProof = { code: string } | { recoveryCode: string };

export type LoginResult = SessionTokens | { mfaRequired: true; mfaToken: string };

export interface AuthServiceDeps {
  db: Database;
  tokens: TokenService;
  totp: TotpService;
  callers: CallerResolver;
  recordAudit: RecordAudit;
  issuer: SessionIssuer;
  now: () => number;
  /**
   * Whether password sign-in is open to this address (false: the tenant enforces single sign-on,
   * 401 SSO_REQUIRED). Asked under the sign-in locks, before any password is hashed; a refusal is
   * not counted as a failed attempt: it costs no hash, and answers alike whatever the password.
   */
  passwordSignInAllowed?: (tx: Transaction, user: UserRow | null, email: string) => Promise<boolean>;
  /** Told of each failed sign-in step and each attempt turned away by the limits (metrics). */
  observe?: SignInObserver;
}

/** Why a sign-in step failed, as metrics count it: a bounded set. */
export type SignInFailure = 'invalid_credentials' | 'user_disabled' | 'mfa_invalid' | 'mfa_replayed' | 'recovery_code_invalid' | 'mfa_token_invalid';

export interface SignInObserver {
  failed(reason: SignInFailure): void;
  throttled(by: Refusal['by']): void;
}

// A role's permissions are one shared Set: sort each once, not on every /auth/me.
const sortedPermissions = new WeakMap<ReadonlySet<string>, Permission[]>();

function sortedPermissionsOf(permissions: ReadonlySet<string>): Permission[] {
  let sorted = sortedPermissions.get(permissions);
  if (!sorted) sortedPermissions.set(permissions, (sorted = [...permissions].sort() as Permission[]));
  return sorted.slice();
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
    permissions: sortedPermissionsOf(caller.permissions),
    mfaEnabled: caller.mfaEnabled,
    mfaVerified: caller.mfaVerified,
  };
}

/**
 * What an address is counted under: an IPv4 address itself; an IPv6 address by its /64, the
 * smallest network one subscriber gets (whoever holds one can use any of its 2^64 addresses). With
 * no address known (a Unix socket), every such client shares one key.
 */
export function clientKeyOf(ip: string | null): string {
  const address = ip?.split('%')[0] ?? '';
  const kind = isIP(address);
  if (kind === 4) return address;
  if (kind !== 6) return 'unknown';
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const [head = '', tail] = address.split('::');
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const full = [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return `${full.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

let passwordVerifications = 0;

/** How many passwords sign-in has verified (argon2) in this process: the cost the limits bound. */
export function passwordVerificationCount(): number {
  return passwordVerifications;
}

const invalidCredentials = () => new AppError('UNAUTHENTICATED', 'Invalid email or password');
const invalidRefreshToken = () => new AppError('UNAUTHENTICATED', 'Refresh token is invalid, expired or revoked');

export function createAuthService(deps: AuthServiceDeps) {
  const { db, tokens, totp, callers, recordAudit, issuer, now } = deps;
  const system = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, SYSTEM_SCOPE, fn);
  const emailKey = (email: string) => email.trim().toLowerCase();

  const loginEvent = signInEvent;

  const gate = createSignInGate(now, (by) => deps.observe?.throttled(by));
  const failed = <E>(reason: SignInFailure, err: E): E => {
    deps.observe?.failed(reason);
    return err;
  };

  /**
   * Reserves a slot among the sign-in attempts of the client's address and of the e-mail, under the
   * locks lockSignIn took, before any password is hashed or code checked. Refuses once the address
   * has 100, or the e-mail 10, failed (or still-running) attempts within 15 minutes. An address
   * refusal records nothing: it is the flood. An account refusal counts against the address and,
   * for a user that exists, is audited. The slot is settled by the caller: deleted on success,
   * marked failed otherwise.
   */
  async function reserve(tx: Transaction, key: string, client: string, user: sessions.SessionUser | null, meta: RequestMeta): Promise<{ attemptId: string } | Refusal> {
    const at = now();
    const { fromClient, forEmail, attempt } = await sessions.reserveAttempt(tx, {
      emailKey: key, clientKey: client, since: new Date(at - LOGIN_WINDOW_MS), at: new Date(at), addressMax: ADDRESS_MAX_FAILURES, emailMax: LOGIN_MAX_FAILURES,
    });
    if (!attempt) return { refusedUntil: fromClient.oldest!.getTime() + LOGIN_WINDOW_MS, by: 'address' };
    if (attempt.outcome === 'refused') {
      if (user) {
        await recordAudit(tx, loginEvent('user.login.failed', user, key, meta, { result: 'denied', reason: 'too_many_attempts', error: 'Too many failed sign-in attempts' }));
      }
      return { refusedUntil: forEmail.oldest!.getTime() + LOGIN_WINDOW_MS, by: 'account' };
    }
    return { attemptId: attempt.id };
  }

  const issueSession = (tx: Transaction, user: UserRow, mfaVerified: boolean, meta: RequestMeta, attemptId: string) =>
    issuer.start(tx, user, { mfaVerified, meta, attemptId });
  const { tokensFor } = issuer;

  async function unknownEmailFailureChained(tx: Transaction, client: string): Promise<boolean> {
    await sessions.lockClient(tx, client);
    return (await sessions.unknownEmailFailuresFrom(tx, client, new Date(now() - LOGIN_WINDOW_MS))) <= UNKNOWN_EMAIL_AUDITS_PER_ADDRESS;
  }

  /**
   * A try at a signed-in user's current password (a password change), counted like a sign-in
   * attempt of its account and address, so a stolen access token guesses no faster than a sign-in
   * could: 429 RATE_LIMITED past the same limits. Its own transaction, committed before the caller
   * hashes anything; the caller settles the attempt (sessions.deleteAttempt / markAttemptFailed).
   * No attempt (null) for a user that is gone or has no password.
   */
  async function reserveOwnPasswordAttempt(userId: string, meta: RequestMeta): Promise<{ user: UserRow | null; attemptId: string | null }> {
    const client = clientKeyOf(meta.ip);
    return gate.admit(client, () => system(async (tx) => {
      const user = await users.findUserById(tx, userId);
      if (!user || user.password_hash === null) return { user, attemptId: null };
      const key = emailKey(user.email);
      await sessions.lockSignIn(tx, client, key, false);
      const reserved = await reserve(tx, key, client, user, meta);
      return isRefusal(reserved) ? reserved : { user, attemptId: reserved.attemptId };
    }));
  }

  /**
   * Two transactions: the attempt's reservation must commit before the password is hashed (so
   * parallel guesses count one another), and no connection is held while it is hashed.
   */
  async function login(email: string, password: string, meta: RequestMeta): Promise<LoginResult> {
    const key = emailKey(email);
    const client = clientKeyOf(meta.ip);
    const { attemptId, user } = await gate.admit(client, () => system(async (tx) => {
      const found = await sessions.lockSignIn(tx, client, key, true);
      if (deps.passwordSignInAllowed && !(await deps.passwordSignInAllowed(tx, found, key))) throw new AppError('SSO_REQUIRED', 'This account signs in with single sign-on');
      const reserved = await reserve(tx, key, client, found, meta);
      return isRefusal(reserved) ? reserved : { attemptId: reserved.attemptId, user: found };
    }));
    passwordVerifications++;
    if (!(await verifyPassword(user?.password_hash ?? null, password)) || !user) {
      await system(async (tx) => {
        await sessions.markAttemptFailed(tx, attemptId);
        // An unknown e-mail is counted (its attempt row) and chained only for the address's first
        // few in the window: probes show in the platform chain, floods do not grow it.
        // Under the address's lock, so parallel failures count one another and the bound is exact.
        const chained = user !== null || (await unknownEmailFailureChained(tx, client));
        if (chained) {
          await recordAudit(tx, loginEvent('user.login.failed', user, key, meta, { result: 'failure', reason: 'invalid_credentials', error: 'Invalid email or password' }));
        }
      });
      throw failed('invalid_credentials', invalidCredentials());
    }
    if (user.disabled_at !== null) {
      // Said only to whoever knows the password: the account exists but an administrator turned it off.
      await system(async (tx) => {
        await sessions.markAttemptFailed(tx, attemptId);
        await recordAudit(tx, loginEvent('user.login.failed', user, key, meta, { result: 'denied', reason: 'user_disabled', error: 'This account is disabled' }));
      });
      throw failed('user_disabled', accountDisabled());
    }
    if (user.mfa_enabled) {
      await system((tx) => sessions.deleteAttempt(tx, attemptId));
      return { mfaRequired: true, mfaToken: await tokens.signMfaChallenge(user.id) };
    }
    return system((tx) => issueSession(tx, user, false, meta, attemptId));
  }

  /**
   * One transaction: checking a code is quick, so the attempt is reserved, the code checked and the
   * attempt settled under the sign-in locks. Wrong codes count against the same limits as wrong
   * passwords: the account's and the address's.
   */
  async function verifyMfa(mfaToken: string, proof: MfaProof, meta: RequestMeta): Promise<SessionTokens> {
    const { userId, sso } = await tokens.verifyMfaChallenge(mfaToken);
    const client = clientKeyOf(meta.ip);
    const usable = (user: UserRow | null): user is UserRow & { mfa_secret: string } => user !== null && user.disabled_at === null && user.mfa_enabled && user.mfa_secret !== null;
    // A challenge for no usable user is refused before the address's limit is looked at.
    if (gate.remembered(client) !== null && !usable(await system((tx) => users.findUserById(tx, userId)))) throw failed('mfa_token_invalid', mfaTokenInvalid());
    const outcome = await gate.admit(client, () => system(async (tx) => {
      const found = await users.findUserById(tx, userId);
      if (!usable(found)) return { invalid: true as const };
      const key = emailKey(found.email);
      await sessions.lockSignIn(tx, client, key, false);
      const reserved = await reserve(tx, key, client, found, meta);
      if (isRefusal(reserved)) return reserved;
      const failure = await checkSecondFactor(tx, found, proof, meta);
      if (failure) {
        await sessions.markAttemptFailed(tx, reserved.attemptId);
        await recordAudit(tx, loginEvent('user.login.failed', found, found.email, meta, { result: 'failure', reason: failure, error: 'Invalid authentication code' }));
        return { failed: failure };
      }
      return { session: await issuer.start(tx, found, { mfaVerified: true, meta, attemptId: reserved.attemptId, ...(sso ? { sso, details: { method: 'sso' } } : {}) }) };
    }));
    if ('invalid' in outcome) throw failed('mfa_token_invalid', mfaTokenInvalid());
    if ('failed' in outcome) {
      if (outcome.failed) deps.observe?.failed(outcome.failed);
      if (outcome.failed === 'mfa_replayed') throw new AppError('MFA_INVALID', 'This authentication code has already been used; wait for the next one');
      if (outcome.failed === 'recovery_code_invalid') throw new AppError('MFA_INVALID', 'Invalid or already used recovery code');
      throw mfaCodeInvalid();
    }
    return outcome.session;
  }

  /** A TOTP code (each step once) or a recovery code (each once, audited); null when it passes, else why not. */
  async function checkSecondFactor(tx: Transaction, user: UserRow & { mfa_secret: string }, proof: MfaProof, meta: RequestMeta) {
    if ('recoveryCode' in proof) {
      const left = await sessions.spendRecoveryCode(tx, user.id, recoveryCodeHash(proof.recoveryCode), new Date(now()));
      if (left === null) return 'recovery_code_invalid' as const;
      await recordAudit(tx, { ...loginEvent('user.mfa.recovery_code_used', user, user.email, meta), details: { codesLeft: left } });
      return null;
    }
    const step = totp.matchStep(totp.open(user.mfa_secret), proof.code, now());
    if (step === null) return 'mfa_invalid' as const;
    if (!(await users.consumeMfaStep(tx, user.id, step))) return 'mfa_replayed' as const;
    return null;
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
      if (!record.user) return 'invalid' as const;
      const next = newRefreshToken();
      await sessions.rotateRefreshToken(tx, record.id, record.session_id, hashRefreshToken(next), at, new Date(at.getTime() + REFRESH_TOKEN_TTL_MS));
      return tokensFor(record.user, record.session_id, record.mfa_verified, next);
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
      const ended = await sessions.endSessionOfToken(tx, hashRefreshToken(refreshToken), new Date(now()));
      if (!ended) return false;
      if (ended.user) await recordAudit(tx, loginEvent('user.logout', ended.user, ended.user.email, meta, { details: { sessionId: ended.session_id } }));
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
    const secret = totp.newSecret();
    return system(async (tx) => {
      const email = await users.setPendingMfaSecret(tx, caller.id, totp.seal(secret));
      if (email === null) {
        await userWithoutMfa(tx, caller); // says why: no such user (401), or MFA on already (409)
        throw new AppError('CONFLICT', 'MFA is already enabled for this account');
      }
      return { secret, otpauthUrl: totp.otpauthUrl(secret, email) };
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

  return { login, verifyMfa, refresh, logout, setupMfa, enableMfa, reserveOwnPasswordAttempt };
}

export type AuthService = ReturnType<typeof createAuthService>;
