// Writing a partner's or organization's ssoConfig (API.md §10), for the tenancy services: checked
// against the issuer before the write's transaction (a network call holds no connection), then
// stored with the secret sealed, unless another tenant's enabled configuration claims a domain.
import type { Transaction } from '../../db/database.js';
import { AppError, invalidRequest } from '../../errors.js';
import type { SecretBox } from '../../secret-box.js';
import { IdpError, type OidcClient } from './oidc-client.js';
import { assertSsoConfigRules, issuerProblem, storedSsoConfig, toStoredSsoConfig, type StoredSsoConfig } from './sso-config.js';
import type { SsoConfigInput } from './sso.schemas.js';
import * as repo from './sso.repo.js';

/** A written configuration that passed its checks: null removes the stored one. */
export type CheckedSsoConfig = { input: SsoConfigInput } | null;

export function createSsoConfigs(deps: { secrets: SecretBox; idp: OidcClient }) {
  return {
    /**
     * Checks a written ssoConfig (`path`: where it sits in the body; undefined: not written): an
     * MFA-verified session (403 MFA_REQUIRED), the rules (400 VALIDATION_FAILED), then the issuer's
     * discovery document, fetched afresh (400 SSO_CONFIG_INVALID saying what failed). Call it
     * before opening the write's transaction.
     */
    async check(caller: { mfaVerified: boolean }, input: SsoConfigInput | null | undefined, path = 'body.ssoConfig'): Promise<CheckedSsoConfig | undefined> {
      if (input === undefined) return undefined;
      // Whoever sets the provider decides who signs in, and as what (JIT with role mapping): as
      // strong as creating users, which needs an MFA-verified session too (API.md §3).
      if (!caller.mfaVerified) throw new AppError('MFA_REQUIRED', 'Changing single sign-on requires a session signed in with multi-factor authentication');
      if (input === null) return null;
      assertSsoConfigRules(input, path);
      try {
        await deps.idp.check({ issuer: input.issuer.trim(), clientId: input.clientId, clientSecret: null });
      } catch (err) {
        const why = err instanceof IdpError ? err.message : 'it could not be checked';
        throw new AppError('SSO_CONFIG_INVALID', `The identity provider ${input.issuer.trim()} cannot be used: ${why}`);
      }
      return { input };
    },

    /**
     * A configuration tried before it is saved (the console's "Test configuration"): the issuer
     * rules and its discovery document, fetched afresh, and what the document names.
     */
    async test(input: { issuer: string; clientId: string }): Promise<{ issuer: string; authorizationEndpoint: string; tokenEndpoint: string; jwksUri: string }> {
      const issuer = input.issuer.trim();
      const problem = issuerProblem(issuer);
      if (problem) throw invalidRequest([{ path: 'body.issuer', message: problem }]);
      try {
        const metadata = await deps.idp.check({ issuer, clientId: input.clientId, clientSecret: null });
        return { issuer: metadata.issuer, authorizationEndpoint: metadata.authorization_endpoint!, tokenEndpoint: metadata.token_endpoint!, jwksUri: metadata.jwks_uri! };
      } catch (err) {
        const why = err instanceof IdpError ? err.message : 'it could not be checked';
        throw new AppError('SSO_CONFIG_INVALID', `The identity provider ${issuer} cannot be used: ${why}`);
      }
    },

    /**
     * The `sso_config` value to write, in the write's transaction (`current`: the stored value,
     * read locked, whose secret an omitted clientSecret keeps). 409 CONFLICT when the configuration
     * is enabled and another tenant's enabled one claims one of its domains; `owner` null: a
     * tenant being created.
     */
    async toStore(tx: Transaction, owner: repo.SsoOwner | null, checked: CheckedSsoConfig, current: unknown): Promise<StoredSsoConfig | null> {
      if (checked === null) return null;
      const stored = toStoredSsoConfig(checked.input, storedSsoConfig(current), deps.secrets.seal);
      if (stored.enabled) {
        const taken = await repo.domainsClaimedElsewhere(tx, stored.emailDomains, owner);
        if (taken.length > 0) {
          throw new AppError('CONFLICT', `E-mail domain ${taken.join(', ')} is already claimed by another tenant’s enabled single sign-on`, {
            errors: [{ path: 'body.ssoConfig.emailDomains', message: `already claimed elsewhere: ${taken.join(', ')}` }],
          });
        }
      }
      return stored;
    },
  };
}

export type SsoConfigs = ReturnType<typeof createSsoConfigs>;
