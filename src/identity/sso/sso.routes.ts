// /auth/sso: sign-in through the tenant's OpenID Provider (API.md §10). No credentials: the
// browser is on its way in.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SsoService } from './sso.service.js';
import type { SsoConfigs } from './sso-configs.js';
import * as S from './sso.schemas.js';

export function ssoRoutes(deps: { sso: SsoService; ssoConfigs: SsoConfigs }): FastifyPluginAsyncTypebox {
  const tags = ['auth'];
  return async (app) => {
    app.post('/auth/sso/discover', {
      schema: {
        operationId: 'discoverSso',
        tags,
        summary: 'Whether an e-mail signs in through single sign-on, and where to send the browser',
        description: 'A known user goes through its own tenant’s enabled configuration (the partner’s for partner-scope users, the '
          + 'organization’s for its users) when the address is in its emailDomains, and never through another tenant’s; an unknown '
          + 'address goes through the enabled configuration claiming its domain. Otherwise {sso: false}: sign in with a password. '
          + 'The authorization URL uses the code flow with PKCE (S256), state and nonce, and is good for 10 minutes. '
          + 'An e-mail keeps its 5 newest unused sign-ins (older ones stop working); one client address starts at most 300 per 10 minutes '
          + '(429 RATE_LIMITED with Retry-After). '
          + 'An identity provider that cannot be reached is 401 SSO_FAILED.',
        body: S.DiscoverBody,
        response: { 200: S.DiscoverResult },
      },
    }, (request) => deps.sso.discover(request.body.email, request.meta));

    app.get('/auth/sso/callback', {
      schema: {
        operationId: 'ssoCallback',
        tags,
        summary: 'The redirect URI to register at the identity provider (PUBLIC_URL/api/v1/auth/sso/callback)',
        description: 'Checks the state (unknown, used or expired fails), trades the code for tokens and checks the ID token (signature, issuer, '
          + 'audience, nonce, expiry), then matches the e-mail inside the configured tenant only, creating the user when jitProvisioning '
          + 'allows. Success: 302 to PUBLIC_URL/sso#code=… (one use, 60 seconds, for POST /auth/sso/exchange). Any failure: 302 to '
          + 'PUBLIC_URL/sso#error=SSO_FAILED, nothing created; the reason is logged, and once the provider has vouched for an address it is '
          + 'audited as user.login.failed with details.method "sso" and the reason.',
        querystring: S.CallbackQuery,
        // Documented as `default` (OpenAPI linters want a 2XX entry); the answer is always a 302.
        response: { default: Type.Null({ description: 'Always 302 Found. Location: PUBLIC_URL/sso#code=… on success, PUBLIC_URL/sso#error=SSO_FAILED on any failure' }) },
      },
    }, async (request, reply) => {
      const raw = request.raw.url ?? '';
      const at = raw.indexOf('?');
      const location = await deps.sso.callback(request.query as Record<string, unknown>, at === -1 ? '' : raw.slice(at + 1), request.meta);
      // The code rides in the fragment (never sent on), and this answer must not be stored.
      return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(location, 302);
    });

    app.post('/auth/sso/test', {
      // As strong as writing a configuration: the service fetches the URL it is given.
      config: { auth: { via: ['jwt'], permission: 'organizations:write', mfa: true } },
      schema: {
        operationId: 'testSsoConfig',
        tags,
        summary: 'Try an identity provider before saving a configuration',
        description: 'Fetches the issuer’s discovery document afresh, as writing an ssoConfig does, and answers what it names. 400 '
          + 'VALIDATION_FAILED for an issuer the rules refuse, 400 SSO_CONFIG_INVALID saying what failed (unreachable, not a discovery '
          + 'document, another issuer, no authorization code flow). Nothing is stored; the client secret is not needed (it is only '
          + 'used at sign-in).',
        body: S.SsoTestBody,
        response: { 200: S.SsoTestResult },
      },
    }, (request) => deps.ssoConfigs.test(request.body));

    app.post('/auth/sso/exchange', {
      schema: {
        operationId: 'exchangeSsoCode',
        tags,
        summary: 'Trade the one-time code of a single sign-on for the login body',
        description: 'The session is marked sso, and is MFA-verified when the configuration has trustIdpMfa and the ID token’s amr holds "mfa". '
          + 'A user with TOTP whose session would not be MFA-verified gets the MFA challenge instead (finish it with POST /auth/mfa/verify). '
          + 'Audited user.login with details.method "sso". A used, expired or unknown code is 401 SSO_FAILED.',
        body: S.ExchangeBody,
        response: { 200: S.ExchangeResult },
      },
    }, (request) => deps.sso.exchange(request.body.code, request.meta));
  };
}
