// /auth: sign-in, MFA, token refresh, sign-out, the current user, partner self-signup.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { callerOf } from '../http/auth.js';
import type { FastifyRequest } from 'fastify';
import { meOf, type AuthService } from './auth.service.js';
import type { RegistrationService } from './registration.service.js';
import * as S from './schemas.js';

export interface AuthRoutesDeps {
  auth: AuthService;
  registration: RegistrationService;
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
      schema: { operationId: 'verifyMfa', tags: ['auth'], summary: 'Complete sign-in with a TOTP code', body: S.MfaVerifyBody, response: { 200: S.SessionTokens } },
    }, (request) => deps.auth.verifyMfa(request.body.mfaToken, request.body.code, request.meta));

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
