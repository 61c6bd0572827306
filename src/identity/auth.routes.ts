// /auth: sign-in, MFA, token refresh, sign-out, the current user, partner self-signup.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { callerOf } from '../http/auth.js';
import type { FastifyRequest } from 'fastify';
import { meOf, type AuthService, type MfaProof } from './auth.service.js';
import type { AccountService } from './account.service.js';
import type { RegistrationService } from './registration.service.js';
import * as S from './schemas.js';

export interface AuthRoutesDeps {
  auth: AuthService;
  account: AccountService;
  registration: RegistrationService;
}

function mfaProofOf(body: { code?: string; recoveryCode?: string }): MfaProof {
  if ((body.code === undefined) === (body.recoveryCode === undefined)) {
    throw new AppError('VALIDATION_FAILED', 'Send exactly one of code and recoveryCode', { errors: [{ path: '/code', message: 'exactly one of code and recoveryCode' }] });
  }
  return body.code !== undefined ? { code: body.code } : { recoveryCode: body.recoveryCode! };
}

export function authRoutes(deps: AuthRoutesDeps): FastifyPluginAsyncTypebox {
  const jwt = { via: ['jwt'] } as const;

  return async (app) => {
    app.post('/auth/login', {
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Sign in with e-mail and password',
        description: 'Returns tokens, or an MFA challenge when the user has MFA enabled. 10 failures for one e-mail within 15 minutes lock further attempts for it (429) until the window passes; 100 failures from one client address within 15 minutes do the same for that address, whatever the e-mail.',
        body: S.LoginBody,
        response: { 200: Type.Union([S.SessionTokens, S.MfaChallenge]) },
      },
    }, (request) => deps.auth.login(request.body.email, request.body.password, request.meta));

    app.post('/auth/mfa/verify', {
      schema: { operationId: 'verifyMfa', tags: ['auth'], summary: 'Complete sign-in with a TOTP code or a recovery code', body: S.MfaVerifyBody, response: { 200: S.SessionTokens } },
    }, (request) => deps.auth.verifyMfa(request.body.mfaToken, mfaProofOf(request.body), request.meta));

    app.post('/auth/refresh', {
      schema: {
        operationId: 'refreshSession',
        tags: ['auth'],
        summary: 'Exchange a refresh token for a new token pair',
        description: 'Refresh tokens rotate: each works once. Presenting a spent one revokes its whole session.',
        body: S.RefreshBody,
        response: { 200: S.SessionTokens },
      },
    }, (request) => deps.auth.refresh(request.body.refreshToken));

    app.post('/auth/logout', {
      schema: { operationId: 'logout', tags: ['auth'], summary: 'End the session of a refresh token', body: S.RefreshBody, response: { 200: S.Success } },
    }, async (request) => {
      await deps.auth.logout(request.body.refreshToken, request.meta);
      return { success: true as const };
    });

    app.get('/auth/me', {
      config: { auth: jwt },
      schema: { operationId: 'getCurrentUser', tags: ['auth'], summary: 'The signed-in user', response: { 200: S.Me } },
    }, async (request) => meOf(callerOf(request)));

    app.post('/auth/mfa/setup', {
      config: { auth: { ...jwt, allowSuspendedOrgWrites: true } },
      schema: { operationId: 'setupMfa', tags: ['auth'], summary: 'Start TOTP enrolment', response: { 200: S.MfaSetup } },
    }, (request) => deps.auth.setupMfa(callerOf(request)));

    app.post('/auth/mfa/enable', {
      config: { auth: { ...jwt, allowSuspendedOrgWrites: true } },
      schema: {
        operationId: 'enableMfa',
        tags: ['auth'],
        summary: 'Finish TOTP enrolment with a current code',
        body: S.MfaEnableBody,
        response: { 200: Type.Object({ mfaEnabled: Type.Literal(true) }) },
      },
    }, (request) => deps.auth.enableMfa(callerOf(request), request.body.code, request.meta));

    // The caller's own account (API.md §10). Ending one's own sessions and changing one's own
    // password stay allowed in a suspended organization: they only take access away.
    const own = { auth: { ...jwt, allowSuspendedOrgWrites: true } } as const;
    app.get('/auth/sessions', {
      config: { auth: jwt },
      schema: {
        operationId: 'listSessions', tags: ['auth'], summary: 'The caller\'s live sessions', querystring: S.SessionListQuery, response: { 200: S.SessionList },
        description: 'Sessions that are neither revoked nor expired, most recently used first; `current` marks the one making the request. Paginated (API.md §4).',
      },
    }, (request) => deps.account.listSessions(callerOf(request), request.query));

    app.delete('/auth/sessions/:id', {
      config: own,
      schema: {
        operationId: 'revokeSession', tags: ['auth'], summary: 'End one of the caller\'s sessions', params: S.IdParams, response: { 200: S.Success },
        description: 'Its access tokens stop working at once on every instance and its refresh token is refused. Another user\'s session, or one already ended, is 404.',
      },
    }, async (request) => {
      await deps.account.revokeSession(callerOf(request), request.params.id, request.meta);
      return { success: true as const };
    });

    app.post('/auth/sessions/revoke-others', {
      config: own,
      schema: { operationId: 'revokeOtherSessions', tags: ['auth'], summary: 'End every session of the caller but the current one', response: { 200: S.RevokedSessions } },
    }, (request) => deps.account.revokeOtherSessions(callerOf(request), request.meta));

    app.post('/auth/mfa/recovery-codes', {
      config: { auth: { ...jwt, mfa: true, allowSuspendedOrgWrites: true } },
      schema: {
        operationId: 'createRecoveryCodes', tags: ['auth'], summary: 'Ten new MFA recovery codes, replacing any earlier ones', response: { 200: S.RecoveryCodes },
        description: 'Needs an MFA-verified session. The codes are shown once and stored hashed; each signs in once through POST /auth/mfa/verify {mfaToken, recoveryCode}.',
      },
    }, (request) => deps.account.newRecoveryCodes(callerOf(request), request.meta));

    app.get('/auth/mfa/recovery-codes', {
      config: { auth: jwt },
      schema: { operationId: 'getRecoveryCodeStanding', tags: ['auth'], summary: 'How many recovery codes the caller has left (never the codes)', response: { 200: S.RecoveryCodeStanding } },
    }, (request) => deps.account.recoveryCodeStanding(callerOf(request)));

    app.post('/auth/password/change', {
      config: own,
      schema: {
        operationId: 'changeOwnPassword', tags: ['auth'], summary: 'Change the caller\'s own password', body: S.ChangePasswordBody, response: { 200: S.Success },
        description: 'Needs the current password (400 VALIDATION_FAILED when it is wrong). Each try counts as a sign-in attempt of the account and the address: past the sign-in limits, 429 RATE_LIMITED with Retry-After. Every other session of the user ends; the current one stays. An account provisioned by single sign-on has no password: 409 CONFLICT.',
      },
    }, async (request) => {
      await deps.account.changePassword(callerOf(request), request.body, request.meta);
      return { success: true as const };
    });

    app.post('/auth/register', {
      schema: {
        operationId: 'registerPartner',
        tags: ['auth'],
        summary: 'Partner self-signup (only with ALLOW_PARTNER_SIGNUP=true)',
        description: 'Creates a pending partner and its admin user; the partner guard blocks them until a system admin activates the partner.',
        body: S.RegisterBody,
        response: { 201: S.Registration },
      },
    }, async (request, reply) => {
      reply.status(201);
      return deps.registration.register(request.body, request.meta);
    });
  };
}
