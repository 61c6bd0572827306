// /auth/password/forgot and /auth/password/reset (API.md §10).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Success } from './schemas.js';
import * as S from './invitation.schemas.js';
import { FORGOT_MAX_PER_ADDRESS, FORGOT_MAX_PER_EMAIL, FORGOT_WINDOW_MS, type PasswordResetService } from './password-reset.service.js';

export function passwordResetRoutes(deps: { passwordResets: PasswordResetService }): FastifyPluginAsyncTypebox {
  const minutes = FORGOT_WINDOW_MS / 60_000;
  return async (app) => {
    // Links still queued for mailing are handled before the database closes.
    app.addHook('onClose', async () => {
      await deps.passwordResets.drain();
    });

    app.post('/auth/password/forgot', {
      schema: {
        operationId: 'forgotPassword',
        tags: ['auth'],
        summary: 'Mail a password reset link',
        description:
          'Always 202 {success: true}, whether or not an account has the address (no enumeration): the link (PUBLIC_URL/reset-password#token=…, ' +
          'one use, 30 minutes) is mailed after the answer, only to a user neither deleted nor disabled. A new request voids the links mailed before it. Throttled like ' +
          `sign-in: ${FORGOT_MAX_PER_EMAIL} requests per e-mail and ${FORGOT_MAX_PER_ADDRESS} per client address within ${minutes} minutes, counted ` +
          'alike for addresses with and without an account; beyond that 429 RATE_LIMITED with Retry-After, and nothing is sent.',
        body: S.ForgotPasswordBody,
        response: { 202: Success },
      },
    }, async (request, reply) => {
      const answer = await deps.passwordResets.forgot(request.body.email, request.meta);
      reply.status(202);
      return answer;
    });

    app.post('/auth/password/reset', {
      schema: {
        operationId: 'resetPassword',
        tags: ['auth'],
        summary: 'Set a new password with a reset link’s token',
        description:
          'Sets the password and ends every session of the user at once (their access tokens stop working on every instance); the user’s other ' +
          'reset links stop working too. An unknown, used or expired token, or one of a user deleted or disabled since, is 400 TOKEN_INVALID; a body refused by ' +
          'validation (400 VALIDATION_FAILED) leaves the token usable. MFA, when enabled, is still asked for at the next sign-in.',
        body: S.ResetPasswordBody,
        response: { 200: Success },
      },
    }, (request) => deps.passwordResets.reset(request.body.token, request.body.password, request.meta));
  };
}
