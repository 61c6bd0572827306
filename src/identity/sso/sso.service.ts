// Sign-in through a tenant's OpenID Provider (API.md §10): e-mail discovery, the callback, and the
// one-time code the console trades for the login body; plus the hook that refuses password
// sign-in where a tenant enforces single sign-on.
import { createHash, randomBytes } from 'node:crypto';
import type { Database, Transaction } from '../../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../../db/tenant-scope.js';
import { AppError } from '../../errors.js';
import type { AuditEvent, RecordAudit } from '../../audit/recorder.js';
import type { RequestMeta } from '../../http/request-meta.js';
import type { SecretBox } from '../../secret-box.js';
import { clientKeyOf, type LoginResult } from '../auth.service.js';
import { signInEvent, type SessionIssuer } from '../session-issuer.js';
import type { TokenService } from '../tokens.js';
import * as users from '../users.repo.js';
import type { UserRow } from '../users.repo.js';
import { userView } from '../users.service.js';
import { IdpError, type IdpClient, type OidcClient } from './oidc-client.js';
import { allowsEmail, emailDomainOf, idpAssertedMfa, jitRole, nameFromClaims, storedSsoConfig, type StoredSsoConfig } from './sso-config.js';
import * as repo from './sso.repo.js';

export const SIGN_IN_TTL_MS = 10 * 60_000;
export const EXCHANGE_CODE_TTL_MS = 60_000;
const PRUNE_BATCH = 100;
/** Unused sign-ins kept per e-mail: a person retrying replaces the oldest. */
export const SIGN_INS_PER_EMAIL = 5;
/** Sign-ins one client address (IPv4, or IPv6 /64) may start per 10 minutes: an office behind one NAT signing in at nine. */
export const SIGN_INS_PER_ADDRESS = 300;
const EXCHANGE_CODE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface SsoServiceDeps {
  db: Database;
  idp: OidcClient;
  secrets: SecretBox;
  issuer: SessionIssuer;
  tokens: TokenService;
  recordAudit: RecordAudit;
  /** The console's address (config.publicUrl): the redirect URI's base and where the browser lands. */
  publicUrl: string;
  now: () => number;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const randomToken = () => randomBytes(32).toString('base64url');
const ssoFailed = () => new AppError('SSO_FAILED', 'Single sign-on failed: the code is invalid, expired or already used; sign in again');

/** Whose configuration signs a user in: a partner-scope user's partner, an organization user's organization. */
function ownerOfUser(user: UserRow): repo.SsoOwner | null {
  if (user.scope === 'partner' && user.partner_id) return { partnerId: user.partner_id, orgId: null };
  if (user.scope === 'organization' && user.partner_id && user.org_id) return { partnerId: user.partner_id, orgId: user.org_id };
  return null;
}

const sameOwner = (a: repo.SsoOwner | null, b: repo.SsoOwner) => a !== null && a.partnerId === b.partnerId && a.orgId === b.orgId;

type Verdict = { user: UserRow } | { reason: string; email: string; user?: UserRow };

export function createSsoService(deps: SsoServiceDeps) {
  const { db, idp, secrets, issuer, tokens, recordAudit, now } = deps;
  const system = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, SYSTEM_SCOPE, fn);
  const redirectUri = `${deps.publicUrl}/api/v1/auth/sso/callback`;
  const failedLocation = `${deps.publicUrl}/sso#error=SSO_FAILED`;
  const clientOf = (c: StoredSsoConfig): IdpClient => ({
    issuer: c.issuer, clientId: c.clientId, clientSecret: c.clientSecretSealed === null ? null : secrets.open(c.clientSecretSealed),
  });

  /** The enabled configuration of a tenant, or null. */
  async function enabledConfig(tx: Transaction, owner: repo.SsoOwner) {
    const tenant = await repo.configOf(tx, owner);
    const config = storedSsoConfig(tenant?.config);
    return tenant && config?.enabled ? { tenant, config } : null;
  }

  /**
   * The configuration an address signs in through. A known user: its own tenant's, when enabled and
   * the address is in its domains; never another tenant's, whatever domains that one claims. An
   * unknown address: the enabled configuration claiming its domain (it may provision the user).
   */
  async function configForAddress(tx: Transaction, email: string, user: UserRow | null) {
    const domain = emailDomainOf(email);
    if (!domain) return null;
    if (user) {
      const owner = ownerOfUser(user);
      const found = owner && (await enabledConfig(tx, owner));
      return found && allowsEmail(found.config, email) ? found : null;
    }
    const tenant = await repo.configClaimingDomain(tx, domain);
    const config = storedSsoConfig(tenant?.config);
    return tenant && config?.enabled ? { tenant, config } : null;
  }

  async function discover(email: string, meta: RequestMeta): Promise<{ sso: false } | { sso: true; authorizationUrl: string }> {
    const address = email.trim();
    const state = randomToken();
    const nonce = randomToken();
    const codeVerifier = randomToken();
    const at = now();
    const found = await system(async (tx) => {
      await repo.pruneExpired(tx, new Date(at), PRUNE_BATCH);
      const target = await configForAddress(tx, address, await repo.findUserByEmail(tx, address));
      if (!target) return null;
      const { tenant, config } = target;
      const stored = await repo.insertSignIn(tx, {
        stateHash: sha256(state), nonce, codeVerifier, partnerId: tenant.partnerId, orgId: tenant.orgId,
        issuer: config.issuer, clientId: config.clientId, at: new Date(at), expiresAt: new Date(at + SIGN_IN_TTL_MS),
        emailKey: address.toLowerCase(), clientKey: clientKeyOf(meta.ip), since: new Date(at - SIGN_IN_TTL_MS),
        emailMax: SIGN_INS_PER_EMAIL, addressMax: SIGN_INS_PER_ADDRESS,
      });
      if (!stored) {
        throw new AppError('RATE_LIMITED', 'Too many single sign-ons started from this address; try again in a few minutes', {
          headers: { 'retry-after': String(SIGN_IN_TTL_MS / 1000) },
        });
      }
      return target;
    });
    if (!found) return { sso: false };
    try {
      const authorizationUrl = await idp.authorizationUrl(clientOf(found.config), { redirectUri, state, nonce, codeVerifier, loginHint: address });
      return { sso: true, authorizationUrl };
    } catch (err) {
      const why = err instanceof IdpError ? err.message : 'unexpected error';
      meta.log.warn({ sso: { reason: 'idp_unavailable', partnerId: found.tenant.partnerId, orgId: found.tenant.orgId, error: why } }, 'single sign-on failed');
      throw new AppError('SSO_FAILED', 'Single sign-on failed: the identity provider cannot be reached; try again later');
    }
  }

  /** Decides who the verified claims sign in, provisioning them when the configuration allows. */
  async function admit(tx: Transaction, owner: repo.SsoOwner, tenant: repo.TenantSsoConfig, config: StoredSsoConfig, claims: Record<string, unknown>, meta: RequestMeta): Promise<Verdict> {
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    if (!email || email.length > 255 || !emailDomainOf(email)) return { reason: 'email_missing', email: '' };
    // Providers that say whether they verified the address are believed; those that say nothing are trusted as configured.
    if (claims.email_verified === false) return { reason: 'email_unverified', email };
    if (!allowsEmail(config, email)) return { reason: 'domain_not_allowed', email };
    if (tenant.partnerStatus !== 'active') return { reason: 'partner_inactive', email };
    const user = await repo.findUserByEmail(tx, email);
    if (user) {
      // Only this tenant's users: a user of any other tenant with this address is never signed in.
      if (!sameOwner(ownerOfUser(user), owner)) return { reason: 'user_outside_tenant', email };
      if (user.disabled_at) return { reason: 'user_disabled', email, user };
      return { user };
    }
    if (!config.jitProvisioning) return { reason: 'unknown_user', email };
    if (tenant.orgStatus === 'suspended') return { reason: 'organization_suspended', email };
    const created = await users.insertTenantUser(tx, {
      email, name: nameFromClaims(claims, email), passwordHash: null,
      scope: owner.orgId === null ? 'partner' : 'organization', partnerId: owner.partnerId, orgId: owner.orgId,
      role: jitRole(config, claims), orgAccess: 'none', orgIds: [],
    });
    if (!created) return { reason: 'tenant_gone', email };
    const view = userView(created);
    await recordAudit(tx, {
      orgId: created.org_id,
      actor: { type: 'user', id: created.id, email: created.email },
      action: 'user.create',
      resource: { type: 'user', id: created.id, name: created.email },
      details: { jit: true, method: 'sso', after: { email: view.email, name: view.name, scope: view.scope, role: view.role, partnerId: view.partnerId, orgId: view.orgId, orgAccess: view.orgAccess, orgIds: view.orgIds } },
      ip: meta.ip,
      userAgent: meta.userAgent,
    });
    return { user: created };
  }

  function failureEvent(owner: repo.SsoOwner, reason: string, email: string, user: UserRow | null, meta: RequestMeta): AuditEvent {
    const event = signInEvent('user.login.failed', user, email, meta, { result: 'failure', reason, error: 'Single sign-on failed', details: { method: 'sso' } });
    return { ...event, orgId: owner.orgId };
  }

  /**
   * The provider's redirect back: returns where to send the browser. Every failure goes to
   * PUBLIC_URL/sso#error=SSO_FAILED with nothing created; its reason is logged, and audited
   * (user.login.failed) once the provider has vouched for someone: earlier failures need no
   * account and anyone can cause them, so they would only grow the audit chain.
   */
  async function callback(query: Record<string, unknown>, rawQuery: string, meta: RequestMeta): Promise<string> {
    try {
      return await completeSignIn(query, rawQuery, meta);
    } catch (err) {
      // E.g. the database unreachable: the browser still lands on the console's failure page.
      meta.log.error({ err, sso: { reason: 'internal' } }, 'single sign-on failed');
      return failedLocation;
    }
  }

  async function completeSignIn(query: Record<string, unknown>, rawQuery: string, meta: RequestMeta): Promise<string> {
    const fail = (reason: string, context: Record<string, unknown> = {}) => {
      meta.log.warn({ sso: { reason, ...context } }, 'single sign-on failed');
      return failedLocation;
    };
    const state = typeof query.state === 'string' ? query.state : '';
    if (!state || state.length > 512) return fail('state_missing');
    const started = await system(async (tx) => {
      const claimed = await repo.claimSignIn(tx, sha256(state), new Date(now()));
      if (claimed.outcome !== 'ok') return { ok: false as const, failed: `state_${claimed.outcome}`, context: {} };
      const { signIn } = claimed;
      const found = await enabledConfig(tx, signIn);
      // The configuration must still be the one the sign-in started with.
      if (!found || found.config.issuer !== signIn.issuer || found.config.clientId !== signIn.clientId) {
        return { ok: false as const, failed: 'config_changed', context: { partnerId: signIn.partnerId, orgId: signIn.orgId } };
      }
      return { ok: true as const, signIn, ...found };
    });
    if (!started.ok) return fail(started.failed, started.context);
    const { signIn, tenant, config } = started;
    const owner = { partnerId: signIn.partnerId, orgId: signIn.orgId };
    const context = { partnerId: owner.partnerId, orgId: owner.orgId, issuer: config.issuer };

    let claims: Record<string, unknown>;
    try {
      claims = await idp.exchange(clientOf(config), new URL(`${redirectUri}?${rawQuery}`), { state, nonce: signIn.nonce, codeVerifier: signIn.codeVerifier });
    } catch (err) {
      return fail('idp_rejected', { ...context, error: err instanceof IdpError ? err.message : 'unexpected error' });
    }

    const code = randomToken();
    try {
      const verdict = await system(async (tx) => {
        const decided = await admit(tx, owner, tenant, config, claims, meta);
        if ('reason' in decided) {
          await recordAudit(tx, failureEvent(owner, decided.reason, decided.email, decided.user ?? null, meta));
          return decided;
        }
        const at = now();
        await repo.insertExchangeCode(tx, {
          codeHash: sha256(code), userId: decided.user.id, mfaVerified: config.trustIdpMfa && idpAssertedMfa(claims), at: new Date(at), expiresAt: new Date(at + EXCHANGE_CODE_TTL_MS),
        });
        return decided;
      });
      if ('reason' in verdict) return fail(verdict.reason, context);
    } catch (err) {
      // E.g. the address taken by a user created at the same moment: the transaction rolled back.
      return fail('not_admitted', { ...context, error: (err as Error).message });
    }
    return `${deps.publicUrl}/sso#code=${code}`;
  }

  /** The one-time code from the callback → the login body, or the TOTP challenge the IdP's word does not replace. */
  async function exchange(code: string, meta: RequestMeta): Promise<LoginResult> {
    if (!EXCHANGE_CODE_PATTERN.test(code)) throw ssoFailed();
    return system(async (tx) => {
      const spent = await repo.spendExchangeCode(tx, sha256(code), new Date(now()));
      const user = spent && (await users.findUserById(tx, spent.user_id));
      if (!spent || !user || user.disabled_at) throw ssoFailed();
      if (user.mfa_enabled && !spent.mfa_verified) return { mfaRequired: true as const, mfaToken: await tokens.signMfaChallenge(user.id, 'sso') };
      return issuer.start(tx, user, { mfaVerified: spent.mfa_verified, meta, sso: true, details: { method: 'sso' } });
    });
  }

  /**
   * For auth.service login(), before any password is hashed: false when single sign-on is enforced
   * for the address. A known user: its own tenant's enabled, enforcing configuration covers its
   * address (users outside the domains could not use the provider, so they keep passwords). An
   * unknown address: an enabled, enforcing configuration claims its domain, so that the answer
   * does not tell which addresses of such a domain have accounts.
   */
  async function passwordSignInAllowed(tx: Transaction, user: UserRow | null, email: string): Promise<boolean> {
    const found = await configForAddress(tx, email.trim(), user);
    return !found?.config.enforce;
  }

  return { discover, callback, exchange, passwordSignInAllowed };
}

export type SsoService = ReturnType<typeof createSsoService>;
