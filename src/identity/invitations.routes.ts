// /users/invitations (invite, list, withdraw) and /auth/invitations/accept (API.md §10).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import { IdParams, SessionTokens, Success } from './schemas.js';
import * as S from './invitation.schemas.js';
import type { InvitationsService } from './invitations.service.js';

export function invitationsRoutes(deps: { invitations: InvitationsService }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt'], permission: 'users:read' } } as const;
  // As user writes (API.md §3): an invitation hands out an account, so it needs an MFA-verified session.
  const write = { auth: { via: ['jwt'], permission: 'users:write', mfa: true } } as const;
  return async (app) => {
    app.post('/users/invitations', {
      config: write,
      schema: {
        operationId: 'createInvitation',
        tags: ['users'],
        summary: 'Invite a user by e-mail',
        description:
          'Takes the POST /users body without a password, with the same reach rules (403 PERMISSION_DENIED outside the caller’s reach or for more than it holds), ' +
          'and mails a link PUBLIC_URL/accept-invitation#token=… that works once within 7 days. 409 CONFLICT when a live user or an open, unexpired ' +
          'invitation already has the e-mail (any case, any tenant, as for users); an expired invitation gives its address up. 503 SERVICE_UNAVAILABLE ' +
          'when the e-mail cannot be sent: the invitation is then withdrawn.',
        body: S.CreateInvitationBody,
        response: { 201: S.Invitation },
      },
    }, async (request, reply) => {
      reply.status(201);
      return deps.invitations.invite(callerOf(request), request.body, request.meta);
    });

    app.get('/users/invitations', {
      config: read,
      schema: {
        operationId: 'listInvitations',
        tags: ['users'],
        summary: 'Open invitations within reach',
        description:
          'Invitations neither accepted nor withdrawn, newest first. Expired ones are listed too (expiresAt in the past) until they are withdrawn ' +
          'or a new invitation for the address replaces them, so a lapsed invitation can be seen and re-sent.',
        querystring: S.ListInvitationsQuery,
        response: { 200: S.InvitationList },
      },
    }, (request) => deps.invitations.list(callerOf(request), request.query));

    app.delete('/users/invitations/:id', {
      config: write,
      schema: {
        operationId: 'deleteInvitation',
        tags: ['users'],
        summary: 'Withdraw an invitation (its link stops working at once)',
        description: 'An open invitation outside the caller’s reach, or granting more than it holds, is 403; an id that is no open invitation anywhere is 404.',
        params: IdParams,
        response: { 200: Success },
      },
    }, (request) => deps.invitations.remove(callerOf(request), request.params.id, request.meta));

    app.post('/auth/invitations/accept', {
      schema: {
        operationId: 'acceptInvitation',
        tags: ['auth'],
        summary: 'Accept an invitation: choose a password and sign in',
        description:
          'Creates the invited user and answers with the login body (the session is not MFA-verified). An unknown, used, withdrawn or expired token is ' +
          '400 TOKEN_INVALID; a body refused by validation (400 VALIDATION_FAILED) leaves the token usable; 409 CONFLICT when a user took the e-mail meanwhile.',
        body: S.AcceptInvitationBody,
        response: { 200: SessionTokens },
      },
    }, (request) => deps.invitations.accept(request.body, request.meta));
  };
}
