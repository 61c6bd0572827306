// Starting a session and the login body (API.md §3) it answers with: shared by every way in:
// password (+ TOTP or a recovery code), an accepted invitation, single sign-on.
import type { Transaction } from '../db/database.js';
import { accountDisabled } from '../errors.js';
import type { AuditEvent, RecordAudit } from '../audit/recorder.js';
import type { RequestMeta } from '../http/request-meta.js';
import { permissionsOf } from './permissions.js';
import type { Me } from './schemas.js';
import * as sessions from './sessions.repo.js';
import { ACCESS_TOKEN_TTL_SECONDS, hashRefreshToken, newRefreshToken, type TokenService } from './tokens.js';
import type { UserRow } from './users.repo.js';

export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
export const REFRESH_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;

export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  user: Me;
}

export type SignInAction = 'user.login' | 'user.login.failed' | 'user.logout' | 'user.mfa.enable' | 'user.mfa.recovery_code_used';

/** A sign-in event: in the user's organization chain when it has one, else the platform chain. */
export function signInEvent(
  action: SignInAction,
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

export interface StartSession {
  mfaVerified: boolean;
  meta: RequestMeta;
  /** The sign-in attempt to settle (password and TOTP sign-ins reserve one); null: none. */
  attemptId?: string | null;
  /** Signed in through the tenant's identity provider. */
  sso?: boolean;
  /** Added to the `user.login` audit details (e.g. `{method: 'sso'}`). */
  details?: Record<string, unknown>;
}

export function createSessionIssuer(deps: { tokens: TokenService; recordAudit: RecordAudit; now: () => number }) {
  const { tokens, recordAudit, now } = deps;

  async function tokensFor(user: sessions.SessionUser, sessionId: string, mfaVerified: boolean, refreshToken: string): Promise<SessionTokens> {
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

  /** A successful sign-in, inside the caller's transaction: the session and its first refresh token stored, the sign-in audited. */
  async function start(tx: Transaction, user: UserRow, s: StartSession): Promise<SessionTokens> {
    // Every way in passes here: a disabled user gets no session, whichever way it came.
    if (user.disabled_at !== null) throw accountDisabled();
    const at = new Date(now());
    const refreshToken = newRefreshToken();
    const sessionId = await sessions.startSession(tx, {
      attemptId: s.attemptId ?? null,
      userId: user.id,
      mfaVerified: s.mfaVerified,
      sso: s.sso ?? false,
      ip: s.meta.ip,
      userAgent: s.meta.userAgent?.slice(0, 1000) ?? null,
      at,
      expiresAt: new Date(at.getTime() + SESSION_TTL_MS),
      refreshTokenHash: hashRefreshToken(refreshToken),
      refreshExpiresAt: new Date(at.getTime() + REFRESH_TOKEN_TTL_MS),
    });
    await recordAudit(tx, signInEvent('user.login', user, user.email, s.meta, { details: { mfa: s.mfaVerified, sessionId, ...s.details } }));
    return tokensFor(user, sessionId, s.mfaVerified, refreshToken);
  }

  return { start, tokensFor };
}

export type SessionIssuer = ReturnType<typeof createSessionIssuer>;
