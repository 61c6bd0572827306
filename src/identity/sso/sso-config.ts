// The rules of a single sign-on configuration that need no network or database: its stored form,
// what reads show of it, the issuer's address rule, and what an ID token's claims decide.
import net from 'node:net';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { Nullable, StringEnum } from '../../http/common-schemas.js';
import { invalidRequest } from '../../errors.js';
import { ROLES, roleCovers, type Role } from '../permissions.js';
import type { SsoConfigInput, SsoConfigView } from './sso.schemas.js';

/** As stored in `sso_config`: the input normalised, the secret sealed (SecretBox) or null. */
export interface StoredSsoConfig {
  enabled: boolean;
  issuer: string;
  clientId: string;
  clientSecretSealed: string | null;
  emailDomains: string[];
  defaultRole: Role;
  roleClaim: string | null;
  roleMapping: Record<string, Role>;
  jitProvisioning: boolean;
  enforce: boolean;
  trustIdpMfa: boolean;
}

const RoleSchema = StringEnum(ROLES);
const StoredShape = Type.Object({
  enabled: Type.Boolean(),
  issuer: Type.String(),
  clientId: Type.String(),
  clientSecretSealed: Nullable(Type.String()),
  emailDomains: Type.Array(Type.String()),
  defaultRole: RoleSchema,
  roleClaim: Nullable(Type.String()),
  roleMapping: Type.Record(Type.String(), RoleSchema),
  jitProvisioning: Type.Boolean(),
  enforce: Type.Boolean(),
  trustIdpMfa: Type.Boolean(),
});

/**
 * The stored configuration, or null. Before 0017, ssoConfig was free JSON with no effect: such a
 * value (kept in the column as it was) reads as no configuration until it is written again.
 */
export function storedSsoConfig(value: unknown): StoredSsoConfig | null {
  return value !== null && Value.Check(StoredShape, value) ? (value as StoredSsoConfig) : null;
}

/** What reads show: everything but the secret, which is only said to be there. */
export function ssoConfigView(value: unknown): SsoConfigView | null {
  const stored = storedSsoConfig(value);
  if (!stored) return null;
  const { clientSecretSealed, ...rest } = stored;
  return { ...rest, clientSecretSet: clientSecretSealed !== null };
}

/** The stored form of a written configuration: an omitted secret keeps the stored one. */
export function toStoredSsoConfig(input: SsoConfigInput, current: StoredSsoConfig | null, seal: (secret: string) => string): StoredSsoConfig {
  const secret = input.clientSecret === undefined
    ? (current?.clientSecretSealed ?? null)
    : input.clientSecret === null ? null : seal(input.clientSecret);
  return {
    enabled: input.enabled,
    issuer: input.issuer.trim(),
    clientId: input.clientId,
    clientSecretSealed: secret,
    emailDomains: [...new Set(input.emailDomains.map((d) => d.toLowerCase()))],
    defaultRole: input.defaultRole,
    roleClaim: input.roleClaim ?? null,
    roleMapping: { ...(input.roleMapping ?? {}) },
    jitProvisioning: input.jitProvisioning ?? false,
    enforce: input.enforce ?? false,
    trustIdpMfa: input.trustIdpMfa ?? false,
  };
}

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const family = net.isIP(host);
  if (family === 4) return host.startsWith('127.');
  if (family === 6) {
    const list = new net.BlockList();
    list.addAddress('::1', 'ipv6');
    list.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
    return list.check(host, 'ipv6');
  }
  return false;
}

/**
 * Why an issuer may not be used, or null: https://, or http:// on a loopback address (development,
 * tests). Private addresses are allowed: identity providers on the LAN are common. An issuer has no
 * credentials, query or fragment (OpenID Connect Discovery §2).
 */
export function issuerProblem(issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) return 'must be an https:// URL (http:// only on a loopback address)';
  } else if (url.protocol !== 'https:') {
    return 'must be an https:// URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (url.search || url.hash || issuer.includes('#')) return 'must not have a query or fragment';
  // openid-client reads such a URL as the document itself, and then skips the issuer check.
  if (url.pathname.includes('/.well-known/')) return 'must be the issuer identifier, not its discovery document';
  return null;
}

/** Throws 400 VALIDATION_FAILED (at `path`) for a configuration the schema lets through but the rules do not. */
export function assertSsoConfigRules(input: SsoConfigInput, path: string): void {
  const problem = issuerProblem(input.issuer.trim());
  if (problem) throw invalidRequest([{ path: `${path}.issuer`, message: problem }]);
  if (input.roleMapping && Object.keys(input.roleMapping).length > 0 && !input.roleClaim) {
    throw invalidRequest([{ path: `${path}.roleClaim`, message: 'is required when roleMapping is given' }]);
  }
}

/** The lowercased domain of an e-mail address, or null when it has none. */
export function emailDomainOf(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  return email.slice(at + 1).trim().toLowerCase().replace(/\.$/, '');
}

export function allowsEmail(config: StoredSsoConfig, email: string): boolean {
  const domain = emailDomainOf(email);
  return domain !== null && config.emailDomains.includes(domain);
}

const ROLE_ORDER: readonly Role[] = ['admin', 'technician', 'readonly'];

/**
 * The role of a user created by just-in-time provisioning: the highest role roleMapping gives one
 * of the role claim's values, else defaultRole. Roles stop at admin (of the tenant): a claim
 * cannot ask for more than the mapping's values, which are roles.
 */
export function jitRole(config: StoredSsoConfig, claims: Record<string, unknown>): Role {
  if (!config.roleClaim) return config.defaultRole;
  const raw = claims[config.roleClaim];
  const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string');
  const mapped = values.flatMap((v) => (Object.hasOwn(config.roleMapping, v) ? [config.roleMapping[v]!] : []))
    .filter((role) => ROLES.includes(role) && roleCovers('admin', role));
  return ROLE_ORDER.find((role) => mapped.includes(role)) ?? config.defaultRole;
}

/** Whether the ID token says the provider used more than one factor (RFC 8176 "mfa"). */
export function idpAssertedMfa(claims: Record<string, unknown>): boolean {
  return Array.isArray(claims.amr) && claims.amr.includes('mfa');
}

/** A display name from the standard claims, else the e-mail. */
export function nameFromClaims(claims: Record<string, unknown>, email: string): string {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const name = text(claims.name) || [text(claims.given_name), text(claims.family_name)].filter(Boolean).join(' ');
  return (name || email).slice(0, 255);
}
