// The ssoConfig of partners and organizations (API.md §10) as clients write and read it, and the
// bodies of /auth/sso. The client secret is write-only: reads say only whether one is stored.
import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../http/common-schemas.js';
import { ROLES } from '../permissions.js';
import { MfaChallenge, SessionTokens } from '../schemas.js';

const Role = StringEnum(ROLES);

/** A DNS name of at least two labels (IDNs in their xn-- form); compared case-insensitively. */
export const DOMAIN_PATTERN = '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])$';
const EmailDomain = Type.String({ minLength: 3, maxLength: 253, pattern: DOMAIN_PATTERN, description: 'an e-mail domain, e.g. example.com' });

const ISSUER_DESCRIPTION = 'The OpenID Provider’s issuer identifier: https://, or http:// on a loopback address (development). '
  + 'Its discovery document (ISSUER/.well-known/openid-configuration) is fetched when the configuration is written.';
const ROLE_CLAIM_DESCRIPTION = 'A top-level ID token claim (a string or an array of strings, e.g. "groups" or "roles") whose values roleMapping maps to roles';
const ROLE_MAPPING_DESCRIPTION = 'Claim value → role. When several values map, the highest role wins; values not listed are ignored. '
  + 'Applied when a user is created by just-in-time provisioning only; roles of existing users are managed in /users. '
  + 'admin is the highest role a mapping can give: JIT never creates system-scope users.';

const common = {
  enabled: Type.Boolean({ description: 'false keeps the configuration but turns sign-in through it (and enforce) off, and releases its domains' }),
  issuer: Type.String({ format: 'uri', minLength: 1, maxLength: 2048, description: ISSUER_DESCRIPTION }),
  clientId: Type.String({ minLength: 1, maxLength: 255 }),
  emailDomains: Type.Array(EmailDomain, {
    minItems: 1,
    maxItems: 50,
    description: 'E-mail domains signed in through this provider (lowercased). A domain can be claimed by one enabled configuration only: '
      + 'enabling one that another tenant’s enabled configuration holds is 409 CONFLICT. An ID token whose e-mail is outside them fails.',
  }),
  defaultRole: StringEnum(ROLES, { description: 'The role of a just-in-time provisioned user when no roleMapping entry applies' }),
};

/**
 * A configuration as written: it replaces the stored one as a whole, except `clientSecret`, which
 * is kept when omitted.
 */
export const SsoConfigInput = Type.Object(
  {
    ...common,
    clientSecret: Type.Optional(Nullable(Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'Write-only: stored encrypted, never returned (reads show clientSecretSet). Omitted: the stored secret is kept; '
        + 'null: removed (a public client, PKCE only).',
    }))),
    roleClaim: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255, description: ROLE_CLAIM_DESCRIPTION }))),
    roleMapping: Type.Optional(Nullable(Type.Record(Type.String({ minLength: 1, maxLength: 255 }), Role, { maxProperties: 100, description: ROLE_MAPPING_DESCRIPTION }))),
    jitProvisioning: Type.Optional(Type.Boolean({
      description: 'Create an unknown user of an allowed domain at first sign-in (default false): in the organization for an organization’s '
        + 'configuration; for a partner’s, a partner-scope user with orgAccess "none" until an administrator grants organizations. '
        + 'Audited user.create with details.jit true.',
    })),
    enforce: Type.Optional(Type.Boolean({
      description: 'Refuse password sign-in (401 SSO_REQUIRED) for the users this configuration signs in (partner-scope users of the partner, '
        + 'or the organization’s users), and for unknown addresses of its domains; default false. Sessions already open are not ended.',
    })),
    trustIdpMfa: Type.Optional(Type.Boolean({
      description: 'A sign-in whose ID token has "mfa" in its amr claim is MFA-verified, and skips the TOTP step of users who have it (default false)',
    })),
  },
  {
    additionalProperties: false,
    description: 'Single sign-on through an OpenID Provider (authorization code flow with PKCE). The redirect URI to register at the provider is '
      + 'PUBLIC_URL/api/v1/auth/sso/callback; the provider must put the e-mail (claim "email") in the ID token. Writing it fetches the '
      + 'issuer’s discovery document: 400 SSO_CONFIG_INVALID when that fails. Writing it (null included) needs an MFA-verified session '
      + '(403 MFA_REQUIRED), as creating users does. null removes the configuration.',
  },
);
export type SsoConfigInput = Static<typeof SsoConfigInput>;

export const SsoConfigView = Type.Object(
  {
    ...common,
    clientSecretSet: Type.Boolean({ description: 'Whether a client secret is stored (it is never returned)' }),
    roleClaim: Nullable(Type.String({ description: ROLE_CLAIM_DESCRIPTION })),
    roleMapping: Type.Record(Type.String(), Role, { description: ROLE_MAPPING_DESCRIPTION }),
    jitProvisioning: Type.Boolean(),
    enforce: Type.Boolean(),
    trustIdpMfa: Type.Boolean(),
  },
  { additionalProperties: false, description: 'The single sign-on configuration, without its client secret' },
);
export type SsoConfigView = Static<typeof SsoConfigView>;

// --- /auth/sso ----------------------------------------------------------------------------------

export const DiscoverBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
export const DiscoverResult = Type.Union([
  Type.Object({ sso: Type.Literal(false) }),
  Type.Object({ sso: Type.Literal(true), authorizationUrl: Type.String({ description: 'Send the browser here; it comes back through /auth/sso/callback' }) }),
]);

/** What the provider sends back; anything odd is a failed sign-in (a redirect), never a 400. */
export const CallbackQuery = Type.Object({}, { additionalProperties: true });

export const ExchangeBody = Type.Object(
  // Any text: a malformed code is 401 SSO_FAILED like an unknown one (API.md §10), decided by its pattern.
  { code: Type.String({ description: 'The code from PUBLIC_URL/sso#code=…' }) },
  { additionalProperties: false },
);
export const ExchangeResult = Type.Union([SessionTokens, MfaChallenge]);

export const SsoTestBody = Type.Object(
  {
    issuer: Type.String({ format: 'uri', minLength: 1, maxLength: 2048, description: ISSUER_DESCRIPTION }),
    clientId: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);

export const SsoTestResult = Type.Object({
  issuer: Type.String({ description: 'The issuer its discovery document names (it must equal the one given)' }),
  authorizationEndpoint: Type.String(),
  tokenEndpoint: Type.String(),
  jwksUri: Type.String(),
});
