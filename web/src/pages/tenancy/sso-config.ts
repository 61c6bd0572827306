// The single sign-on configuration of a partner or an organization (API.md §10) as the form edits
// it: the types the API reads and writes, the form's values, their checks (made as the service's
// schema states them, before anything is sent), and the body they become.
import type { paths } from '../../api/schema';
import type { Organization } from './resources';

type OrgPatch = NonNullable<paths['/api/v1/orgs/organizations/{id}']['patch']['requestBody']>['content']['application/json'];
/** A configuration as written (PATCH …{ssoConfig}); the secret is write-only. */
export type SsoInput = NonNullable<OrgPatch['ssoConfig']>;
/** A configuration as read: without its secret, which is only said to be stored. */
export type SsoView = NonNullable<Organization['ssoConfig']>;
export type Role = SsoInput['defaultRole'];
export const ROLES: readonly Role[] = ['admin', 'technician', 'readonly'];

export interface MappingRow { key: number; value: string; role: Role }

export interface SsoValues {
  enabled: boolean;
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** A stored secret is removed (a public client, PKCE only). */
  removeSecret: boolean;
  emailDomains: string;
  defaultRole: Role;
  roleClaim: string;
  mapping: MappingRow[];
  jitProvisioning: boolean;
  enforce: boolean;
  trustIdpMfa: boolean;
}

/** The form's field names; a server path `body.ssoConfig.<field>…` lands at its field. */
export type SsoField = 'issuer' | 'clientId' | 'clientSecret' | 'emailDomains' | 'defaultRole' | 'roleClaim' | 'roleMapping';
export type SsoErrors = Partial<Record<SsoField, string>>;

let nextKey = 1;
export const mappingRow = (value = '', role: Role = 'readonly'): MappingRow => ({ key: nextKey++, value, role });

export function initialValues(view: SsoView | null): SsoValues {
  return {
    enabled: view?.enabled ?? true,
    issuer: view?.issuer ?? '',
    clientId: view?.clientId ?? '',
    clientSecret: '',
    removeSecret: false,
    emailDomains: (view?.emailDomains ?? []).join('\n'),
    defaultRole: view?.defaultRole ?? 'readonly',
    roleClaim: view?.roleClaim ?? '',
    mapping: Object.entries(view?.roleMapping ?? {}).map(([value, role]) => mappingRow(value, role)),
    jitProvisioning: view?.jitProvisioning ?? false,
    enforce: view?.enforce ?? false,
    trustIdpMfa: view?.trustIdpMfa ?? false,
  };
}

// As the service's schema (sso.schemas.ts DOMAIN_PATTERN): a DNS name of two labels or more.
const DOMAIN = /^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])$/;

export function parseDomains(text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).map((d) => d.trim().toLowerCase().replace(/^@/, '')).filter(Boolean))];
}

/** Why an issuer cannot be used, in the service's words (sso-config.ts issuerProblem), or null. */
export function issuerProblem(issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'Enter the issuer as an absolute URL, e.g. https://login.example.com/realms/acme.';
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const loopback = host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1';
  if (url.protocol === 'http:' && !loopback) return 'The issuer must be an https:// URL (http:// only on a loopback address).';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'The issuer must be an https:// URL.';
  if (url.username || url.password) return 'The issuer must not contain credentials.';
  if (url.search || issuer.includes('#')) return 'The issuer must not have a query or fragment.';
  if (url.pathname.includes('/.well-known/')) return 'Enter the issuer identifier, not the address of its discovery document.';
  return null;
}

/** The checks of the fields the test needs (issuer, client id). */
export function checkProvider(values: SsoValues, errors: SsoErrors): void {
  const issuer = values.issuer.trim();
  if (!issuer) errors.issuer = 'Enter the issuer of your identity provider.';
  else if (issuer.length > 2048) errors.issuer = 'The issuer can have at most 2048 characters.';
  else {
    const problem = issuerProblem(issuer);
    if (problem) errors.issuer = problem;
  }
  if (!values.clientId.trim()) errors.clientId = 'Enter the client ID the identity provider gave this console.';
  else if (values.clientId.trim().length > 255) errors.clientId = 'The client ID can have at most 255 characters.';
  if (values.clientSecret.length > 2048) errors.clientSecret = 'The client secret can have at most 2048 characters.';
}

/** The body to save, or the problems found (by field). */
export function toInput(values: SsoValues, stored: SsoView | null): { input: SsoInput; errors: SsoErrors } {
  const errors: SsoErrors = {};
  checkProvider(values, errors);
  const domains = parseDomains(values.emailDomains);
  const bad = domains.filter((d) => !DOMAIN.test(d) || d.length > 253);
  if (domains.length === 0) errors.emailDomains = 'Enter at least one e-mail domain, e.g. contoso.com.';
  else if (bad.length > 0) errors.emailDomains = `Not a domain name: ${bad.join(', ')}. Enter domains like contoso.com, without the @.`;
  else if (domains.length > 50) errors.emailDomains = 'At most 50 domains.';
  const mapping = values.mapping.filter((row) => row.value.trim());
  const roleClaim = values.roleClaim.trim();
  if (roleClaim.length > 255) errors.roleClaim = 'The claim name can have at most 255 characters.';
  if (mapping.length > 0 && !roleClaim) errors.roleClaim = 'Name the claim whose values the role mapping below maps.';
  const values_ = mapping.map((row) => row.value.trim());
  const duplicate = values_.find((v, i) => values_.indexOf(v) !== i);
  if (duplicate) errors.roleMapping = `The claim value “${duplicate}” is mapped twice.`;
  else if (mapping.length > 100) errors.roleMapping = 'At most 100 mapped values.';
  else if (values_.some((v) => v.length > 255)) errors.roleMapping = 'A claim value can have at most 255 characters.';

  const input: SsoInput = {
    enabled: values.enabled,
    issuer: values.issuer.trim(),
    clientId: values.clientId.trim(),
    emailDomains: domains,
    defaultRole: values.defaultRole,
    roleClaim: roleClaim || null,
    roleMapping: mapping.length > 0 ? Object.fromEntries(mapping.map((row) => [row.value.trim(), row.role])) : null,
    jitProvisioning: values.jitProvisioning,
    enforce: values.enforce,
    trustIdpMfa: values.trustIdpMfa,
  };
  // Write-only secret: a new one replaces the stored one, none keeps it, or it is removed on request.
  if (values.clientSecret) input.clientSecret = values.clientSecret;
  else if (values.removeSecret && stored?.clientSecretSet) input.clientSecret = null;
  return { input, errors };
}

/** The redirect URI to register at the provider: this console's address (PUBLIC_URL) + the callback. */
export function redirectUri(): string {
  return `${window.location.origin}/api/v1/auth/sso/callback`;
}
