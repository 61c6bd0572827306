// Authentication and authorisation for every route, declared as data on the route:
//   config: { auth: { via: ['jwt'], permission: 'users:write', mfa: true } }
// An onRoute hook turns that into an onRequest guard (so 401/403 come before body validation) and
// into the route's OpenAPI security. The credentials themselves are checked by authenticators that
// app.ts hands in (identity: JWT, api-keys: X-API-Key, devices: the agent's token), so this file
// knows no domain module. An agent route declares `config: { auth: { via: ['agent'] } }` alone:
// its caller is a device (`agentOf(request)`), never a user or key.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AppError, accountOfDeletedOrg, accountWithoutOrg } from '../errors.js';
import type { TenantScope } from '../db/tenant-scope.js';

export type CallerScope = 'system' | 'partner' | 'organization';
export type Credential = 'jwt' | 'api_key' | 'agent';

/** Who is calling, resolved once per request. */
export interface Caller {
  kind: 'user' | 'api_key';
  /** The user id, or the API key id. */
  id: string;
  userId: string | null;
  email: string | null;
  name: string | null;
  scope: CallerScope;
  partnerId: string | null;
  orgId: string | null;
  role: string | null;
  /** Role permissions for users; granted scopes for API keys. */
  permissions: ReadonlySet<string>;
  /** The user has TOTP enabled (always false for API keys). */
  mfaEnabled: boolean;
  mfaVerified: boolean;
  /** null: every organization (system scope). */
  accessibleOrgIds: readonly string[] | null;
  canAccessOrg(orgId: string): boolean;
  /** Status of the caller's partner: 'active', 'pending', …, or 'deleted'; null for system scope. */
  partnerStatus: string | null;
  /** Status of an organization-scope caller's organization ('deleted' when gone). */
  orgStatus: string | null;
  sessionId: string | null;
  tenant: TenantScope;
}

/** The device an agent request speaks for (`Authorization: Bearer <authToken>` on /agents/:id/…). */
export interface AgentCaller {
  deviceId: string;
  agentId: string;
  orgId: string;
  siteId: string;
  hostname: string;
  lastSourceIp: string | null;
  /** Row-level scope of the device's organization, for the request's transaction. */
  tenant: TenantScope;
}

export interface RouteAuth {
  /** ['agent'] stands alone: agent routes take no user or key credential. */
  via: readonly Credential[];
  /** Caller scope levels admitted (SPEC "Authentication" 10); default: all. */
  scopes?: readonly CallerScope[];
  /** Role permission for users, key scope for API keys. */
  permission?: string;
  mfa?: boolean;
  /** Organization-scope users of a suspended organization may still call this write route. */
  allowSuspendedOrgWrites?: boolean;
}

export type Authenticator = (credential: string, request: FastifyRequest, reply: FastifyReply) => Promise<Caller>;

/**
 * X-API-Key authentication in two steps around the route's guards, so that a request refused by
 * the partner guard or a scope check takes nothing from the key's rate-limit window (API.md §5).
 */
export interface ApiKeyAuthenticator {
  /** Resolves the key (SPEC "Authentication" 4, steps 1-5). `fresh`: do not trust a cached copy. */
  authenticate(key: string, request: FastifyRequest, reply: FastifyReply, fresh: boolean): Promise<Caller>;
  /**
   * Steps 6-7: one step in the sliding window (429 when over), rate-limit headers, usage. false: the
   * cached key turned out stale, authenticate again. `final`: admit whatever the cache says.
   */
  admit(caller: Caller, request: FastifyRequest, reply: FastifyReply, final: boolean): Promise<boolean>;
  /** Rate-limit headers for a request refused before the limiter, taking nothing from the window. */
  describe(caller: Caller, reply: FastifyReply): Promise<void>;
}

/** Resolves the agent token for the `:id` (agentId) of the route: 404 unknown agent, then 401. */
export type AgentAuthenticator = (token: string | null, agentId: string) => Promise<AgentCaller>;

export interface Authenticators {
  jwt: Authenticator;
  apiKey?: ApiKeyAuthenticator;
  agent?: AgentAuthenticator;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    caller: Caller | null;
    agent: AgentCaller | null;
  }
}

/** API.md §2: agent routes take bodies up to 5 MiB (every other route 1 MiB). */
export const AGENT_BODY_LIMIT = 5 * 1024 * 1024;

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

function apiKeyHeader(request: FastifyRequest): string | null {
  const value = request.headers['x-api-key'];
  if (value === undefined) return null;
  // A repeated header arrives as an array (or joined): neither is one key, and neither passes the format check.
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The caller of a route that declared auth; throws if the route did not (a programming error). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error(`route ${request.routeOptions.url} has no auth config`);
  return request.caller;
}

/** The device of a route that declared `via: ['agent']`; throws if the route did not (a programming error). */
export function agentOf(request: FastifyRequest): AgentCaller {
  if (!request.agent) throw new Error(`route ${request.routeOptions.url} has no agent auth config`);
  return request.agent;
}

/**
 * SPEC "Errors": key management refuses an organization-scope caller without a valid organization
 * in its context (403 ACCOUNT_MISCONFIGURED, API.md §2): none at all, or one since deleted.
 */
export function assertOrganizationContext(caller: Caller): void {
  if (caller.scope !== 'organization') return;
  if (!caller.orgId) throw accountWithoutOrg();
  if (caller.orgStatus === 'deleted') throw accountOfDeletedOrg();
}

function authorise(caller: Caller, auth: RouteAuth, method: string): void {
  if (caller.scope !== 'system' && caller.partnerStatus !== 'active') {
    throw new AppError(
      'PARTNER_INACTIVE',
      caller.partnerStatus === 'deleted' ? 'The partner account has been deleted' : `The partner account is not active (status: ${caller.partnerStatus})`,
    );
  }
  if (
    caller.scope === 'organization' &&
    caller.orgStatus === 'suspended' &&
    !READ_METHODS.has(method) &&
    !auth.allowSuspendedOrgWrites
  ) {
    throw new AppError('ORG_SUSPENDED', 'This organization is suspended: its data can be read but not changed');
  }
  if (auth.scopes && !auth.scopes.includes(caller.scope)) {
    throw new AppError('PERMISSION_DENIED', `This endpoint is not available to ${caller.scope}-scope callers`);
  }
  if (auth.permission && !caller.permissions.has(auth.permission) && !caller.permissions.has('*')) {
    throw caller.kind === 'api_key'
      ? new AppError('API_KEY_SCOPE_DENIED', 'API key does not have required permissions')
      : new AppError('PERMISSION_DENIED', `This action requires the ${auth.permission} permission`);
  }
  if (auth.mfa && !caller.mfaVerified) {
    throw new AppError('MFA_REQUIRED', 'This action requires a session signed in with multi-factor authentication');
  }
}

const MAX_KEY_ATTEMPTS = 3;

async function authenticateKey(keys: ApiKeyAuthenticator, value: string, auth: RouteAuth, request: FastifyRequest, reply: FastifyReply): Promise<Caller> {
  for (let attempt = 1; ; attempt++) {
    const caller = await keys.authenticate(value, request, reply, attempt > 1);
    try {
      authorise(caller, auth, request.method);
    } catch (err) {
      await keys.describe(caller, reply);
      throw err;
    }
    if (await keys.admit(caller, request, reply, attempt === MAX_KEY_ATTEMPTS)) return caller;
  }
}

function agentGuard(authenticate: AgentAuthenticator) {
  return async function authenticateAgent(request: FastifyRequest): Promise<void> {
    request.agent = await authenticate(bearerToken(request), (request.params as { id?: string }).id ?? '');
  };
}

function guard(auth: RouteAuth, authenticators: Authenticators) {
  if (auth.via.includes('agent')) {
    if (auth.via.length !== 1) throw new Error('agent routes take the agent credential only');
    if (!authenticators.agent) throw new Error('an agent route needs an agent authenticator');
    return agentGuard(authenticators.agent);
  }
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // SPEC "Authentication" 3: the API key wins; the JWT is consulted only when X-API-Key is absent.
    const apiKey = auth.via.includes('api_key') && authenticators.apiKey ? apiKeyHeader(request) : null;
    if (apiKey !== null) {
      request.caller = await authenticateKey(authenticators.apiKey!, apiKey, auth, request, reply);
      return;
    }
    const token = auth.via.includes('jwt') ? bearerToken(request) : null;
    if (token === null) {
      reply.header('www-authenticate', 'Bearer');
      const how = [auth.via.includes('jwt') && 'Authorization: Bearer <access token>', auth.via.includes('api_key') && 'X-API-Key: <API key>']
        .filter(Boolean)
        .join(' or ');
      throw new AppError('UNAUTHENTICATED', `Authentication required: send ${how}`);
    }
    const caller = await authenticators.jwt(token, request, reply);
    authorise(caller, auth, request.method);
    request.caller = caller;
  };
}

const SECURITY: Record<Credential, Record<string, string[]>> = {
  jwt: { bearerAuth: [] },
  api_key: { apiKeyAuth: [] },
  agent: { agentToken: [] },
};

export function installAuth(app: FastifyInstance, authenticators: Authenticators): void {
  app.decorateRequest('caller', null);
  app.decorateRequest('agent', null);
  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = route.config?.auth;
    if (!auth) {
      // Public routes say so in the document, so generated clients send no credential. A route
      // that checks a credential of its own (GET /metrics) declares its security itself.
      if (route.schema && !route.schema.hide && route.schema.security === undefined) route.schema = { ...route.schema, security: [] } as typeof route.schema;
      return;
    }
    if (auth.via.includes('agent')) route.bodyLimit ??= AGENT_BODY_LIMIT;
    const onRequest = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [guard(auth, authenticators), ...onRequest];
    route.schema = { ...route.schema, security: auth.via.map((credential) => SECURITY[credential]) } as typeof route.schema;
  });
}
