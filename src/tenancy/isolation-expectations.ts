// What a caller of another tenant (B) must get from every operation of the API when it is aimed at
// tenant A's resources, keyed "METHOD /path" exactly as the served OpenAPI document names them.
// isolation.test.ts sweeps every entry with every credential type of tenant B and fails when the
// document has an operation this table lacks, or the table names one the document no longer has.
//
// An entry states the route's contract (API.md §2, §3 roles, §5 credentials) and the answer to an
// out-of-reach target; `expectedFor` turns that into the answer for each credential, so what a
// credential gets follows from rules a reviewer can check against API.md instead of 600 cells.

export const CREDENTIALS = [
  'partner-admin', 'partner-technician', 'partner-readonly',
  'org-admin', 'org-technician', 'org-readonly',
  'api-key', 'agent',
] as const;
export type Credential = (typeof CREDENTIALS)[number];

/** An answer: its status, and for errors the API.md §2 code. A 2xx body must name nothing of tenant A. */
export interface Outcome {
  status: number;
  code?: string;
}

const refuse = (status: 401 | 403 | 404 | 409, code: string): Outcome => ({ status, code });
const UNAUTHENTICATED = refuse(401, 'UNAUTHENTICATED');
const PERMISSION_DENIED = refuse(403, 'PERMISSION_DENIED');
const NOT_FOUND = refuse(404, 'NOT_FOUND');
const ORG_ACCESS_DENIED = refuse(403, 'ORG_ACCESS_DENIED');
const SITE_ACCESS_DENIED = refuse(403, 'SITE_ACCESS_DENIED');
const VALIDATION_FAILED: Outcome = { status: 400, code: 'VALIDATION_FAILED' };
/** 200 with a body that names nothing of tenant A (a list filtered to the caller, or the caller's own). */
const NOTHING_OF_A: Outcome = { status: 200 };

type Permission =
  | 'organizations:read' | 'organizations:write' | 'users:read' | 'users:write'
  | 'devices:read' | 'devices:write' | 'audit:read' | 'audit:export';

/** API.md §3: roles → permissions. */
const ROLE_PERMISSIONS: Record<'admin' | 'technician' | 'readonly', readonly Permission[]> = {
  admin: ['organizations:read', 'organizations:write', 'users:read', 'users:write', 'devices:read', 'devices:write', 'audit:read', 'audit:export'],
  technician: ['organizations:read', 'devices:read', 'devices:write', 'audit:read'],
  readonly: ['organizations:read', 'devices:read', 'audit:read'],
};

/** Tenant A's ids the sweep aims at, and what of tenant B's own the probes use. */
export interface Targets {
  partnerId: string;
  orgId: string;
  otherOrgId: string;
  siteId: string;
  userId: string;
  userIds: string[];
  apiKeyId: string;
  enrollmentKeyId: string;
  eventDestinationId: string;
  deviceId: string;
  agentId: string;
  auditEntryId: string;
  /** A live session of A's organization admin. */
  sessionId: string;
  /** An open invitation into A's organization. */
  invitationId: string;
  /** Tenant B's own: its enrollment key (the credential of enroll), a partner user and a device it may change. */
  attacker: { enrollmentKey: string; partnerUserId: string; deviceId: string };
}

/** Tenant A's id for a path parameter, by the collection the parameter names. */
export function pathValue(path: string, name: string, a: Targets): string {
  if (name === 'deviceId') return a.deviceId;
  if (name === 'name') return 'System'; // a live event log's name
  if (name === 'recordId') return '1';
  const collection = /\/([^/]+)\/\{id\}/.exec(path)?.[1];
  const byCollection: Record<string, string> = {
    users: a.userId, partners: a.partnerId, organizations: a.orgId, sites: a.siteId, 'api-keys': a.apiKeyId,
    'enrollment-keys': a.enrollmentKeyId, devices: a.deviceId, agents: a.agentId, logs: a.auditEntryId, 'event-destinations': a.eventDestinationId,
    sessions: a.sessionId, invitations: a.invitationId,
  };
  if (name === 'id' && collection && byCollection[collection]) return byCollection[collection];
  throw new Error(`no tenant-A value for path parameter {${name}} of ${path}: add one to pathValue`);
}

/** Query parameters that name a tenant: set to tenant A's, and left out for a collection's own view. */
export const TENANT_FILTERS: Record<string, (a: Targets) => string> = {
  orgId: (a) => a.orgId, organizationId: (a) => a.orgId, partnerId: (a) => a.partnerId, siteId: (a) => a.siteId,
};
/** Body fields that name a tenant: always sent, with tenant A's ids. */
export const REACH_FIELDS: Record<string, (a: Targets) => string> = { orgId: (a) => a.orgId, partnerId: (a) => a.partnerId, siteId: (a) => a.siteId };

/**
 * A request beside the sweep: a public route's credential in the body, or B acting on its own
 * resource with A's ids in the body (a grant or move across tenants).
 */
export interface Probe {
  name: string;
  /** None for public routes. */
  credential?: Credential;
  /** The concrete path, when it is not the operation's (B's own resource), or the operation's with a query. */
  url?: string;
  payload: Record<string, unknown>;
  expect: Outcome;
}

export interface PublicExpectation {
  /** Why the route is not tenant-scoped: it is swept with no credential of B's. */
  public: string;
  probes?: (targets: Targets) => Probe[];
}

export interface SweptExpectation {
  /** Credentials the route takes: JWT, JWT or X-API-Key, X-API-Key only, or the agent token on /agents/:id/…. */
  via: 'jwt' | 'jwt+key' | 'key' | 'agent';
  /** Caller scopes admitted (SPEC permission matrix); others get PERMISSION_DENIED. Default: both. */
  scopes?: readonly ('partner' | 'organization')[];
  /** Role permission (or API-key scope); a role without it gets PERMISSION_DENIED. */
  permission?: Permission;
  /** What a caller admitted to the route (and to its permission) gets when aimed at tenant A. */
  reach: Outcome;
  /** A collection: also swept without its tenant filters, and tenant A's owner sees A's data through it. */
  collection?: true;
  /** Acts on the caller itself (or on nothing of any tenant's): no target of A's to aim at. */
  self?: string;
  /** The body, where the one derived from the request schema would be refused for something other than reach. */
  body?: (targets: Targets) => Record<string, unknown>;
  /** Query values for required parameters that name no organization. */
  query?: Record<string, string>;
  probes?: (targets: Targets) => Probe[];
}

export type Expectation = PublicExpectation | SweptExpectation;

export const isPublic = (e: Expectation): e is PublicExpectation => 'public' in e;

const jwt = (permission: Permission, reach: SweptExpectation['reach'], more: Partial<SweptExpectation> = {}): SweptExpectation => ({ via: 'jwt', permission, reach, ...more });
const jwtOrKey = (permission: Permission, reach: SweptExpectation['reach'], more: Partial<SweptExpectation> = {}): SweptExpectation => ({ via: 'jwt+key', permission, reach, ...more });
const agent: SweptExpectation = { via: 'agent', reach: UNAUTHENTICATED };
/** /orgs/partners administration: system scope only (SPEC permission matrix). */
const systemOnly = (permission: Permission): SweptExpectation => ({ via: 'jwt', scopes: [], permission, reach: PERMISSION_DENIED });
const partnerOnly = { scopes: ['partner'] } as const;
const list = { collection: true } as const;

/**
 * API.md §4's `search` on a list, aimed at what names tenant A's rows (alone, and beside the
 * filter naming A's organization or partner): the answer still holds nothing of A's.
 */
const searchProbes = (path: string, search: string, credentials: readonly Credential[], filter: 'orgId' | 'partnerId') => (a: Targets): Probe[] =>
  credentials.flatMap((credential) => [
    { name: `a search for "${search}"`, credential, url: `${path}?search=${encodeURIComponent(search)}`, payload: {}, expect: NOTHING_OF_A },
    {
      name: `a search for "${search}" with A’s ${filter}`, credential, url: `${path}?${filter}=${TENANT_FILTERS[filter]!(a)}&search=${encodeURIComponent(search)}`,
      payload: {}, expect: NOTHING_OF_A,
    },
  ]);

export const EXPECTATIONS: Record<string, Expectation> = {
  'GET /healthz': { public: 'process liveness: no credential, no tenant data' },
  'GET /readyz': { public: 'database reachability: no credential, no tenant data' },
  'GET /metrics': {
    public: 'operations: METRICS_TOKEN is the credential; no label names a tenant but the ten audit chains waiting longest',
    probes: () => CREDENTIALS.map((credential) => ({ name: 'a tenant’s credential is not the metrics token', credential, payload: {}, expect: UNAUTHENTICATED })),
  },

  // Identity: the credential is in the body (password, MFA challenge, refresh token), never a tenant's id.
  'POST /api/v1/auth/login': { public: 'sign-in: the password is the credential; the body names no tenant' },
  'POST /api/v1/auth/mfa/verify': { public: 'second sign-in step: the MFA challenge token is the credential' },
  'POST /api/v1/auth/refresh': { public: 'the refresh token is the credential and speaks only for its own session' },
  'POST /api/v1/auth/logout': { public: 'the refresh token is the credential and ends only its own session family' },
  'POST /api/v1/auth/register': { public: 'partner sign-up creates a new pending partner; it names no existing tenant' },
  'GET /api/v1/auth/me': { via: 'jwt', reach: NOTHING_OF_A, self: 'the caller’s own account' },
  // Tenant B's sessions are MFA-verified, so MFA is already on: the answer is about the caller only.
  'POST /api/v1/auth/mfa/setup': { via: 'jwt', reach: refuse(409, 'CONFLICT'), self: 'the caller’s own MFA enrolment' },
  'POST /api/v1/auth/mfa/enable': { via: 'jwt', reach: refuse(409, 'CONFLICT'), self: 'the caller’s own MFA enrolment' },
  'GET /api/v1/auth/api-key': { via: 'key', reach: NOTHING_OF_A, self: 'the presented API key itself' },
  // The caller's own account (API.md §10): sessions are looked up by user, so A's is 404 to anyone else.
  'GET /api/v1/auth/sessions': { via: 'jwt', reach: NOTHING_OF_A, self: 'the caller’s own sessions' },
  'DELETE /api/v1/auth/sessions/{id}': { via: 'jwt', reach: NOT_FOUND },
  'POST /api/v1/auth/sessions/revoke-others': { via: 'jwt', reach: NOTHING_OF_A, self: 'the caller’s own other sessions (the sweep holds one per user)' },
  'GET /api/v1/auth/mfa/recovery-codes': { via: 'jwt', reach: NOTHING_OF_A, self: 'how many of the caller’s own recovery codes are left' },
  'POST /api/v1/auth/mfa/recovery-codes': { via: 'jwt', reach: NOTHING_OF_A, self: 'the caller’s own recovery codes' },
  // The derived body's current password is wrong: refused before anything changes.
  'POST /api/v1/auth/password/change': { via: 'jwt', reach: VALIDATION_FAILED, self: 'the caller’s own password' },

  'GET /api/v1/users': jwt('users:read', NOTHING_OF_A, list),
  'POST /api/v1/users': jwt('users:write', PERMISSION_DENIED, {
    // The schema's first scope is `system`, refused for another reason; aim an org user at A's organization.
    body: (a) => ({ email: `planted-${a.orgId.slice(0, 8)}@example.test`, name: 'planted', password: 'long-enough-password', scope: 'organization', role: 'readonly', orgId: a.orgId }),
    probes: (a) => {
      const user = { name: 'planted', password: 'long-enough-password', scope: 'partner', role: 'readonly' };
      return [
        { name: 'a partner user of A’s partner', credential: 'partner-admin', payload: { ...user, email: 'planted-p@example.test', partnerId: a.partnerId }, expect: PERMISSION_DENIED },
        // Refused as validation (orgIds must be the new user's partner's); API.md §2's "granted more
        // than the caller holds" could be read as 403 PERMISSION_DENIED. Either way nothing is granted.
        {
          name: 'a partner user of B’s granted A’s organization', credential: 'partner-admin',
          payload: { ...user, email: 'planted-s@example.test', orgAccess: 'selected', orgIds: [a.orgId] }, expect: VALIDATION_FAILED,
        },
      ];
    },
  }),
  'GET /api/v1/users/{id}': jwt('users:read', NOT_FOUND),
  // API.md §2: a user changed outside the caller's reach is 403, not 404.
  'PATCH /api/v1/users/{id}': jwt('users:write', PERMISSION_DENIED, {
    probes: (a) => [{
      name: 'B’s own partner user granted A’s organization', credential: 'partner-admin', url: `/api/v1/users/${a.attacker.partnerUserId}`,
      payload: { orgAccess: 'selected', orgIds: [a.orgId] }, expect: VALIDATION_FAILED,
    }],
  }),
  'DELETE /api/v1/users/{id}': jwt('users:write', PERMISSION_DENIED),
  // Invitations (API.md §10): the /users rules, the create body without a password.
  'GET /api/v1/users/invitations': jwt('users:read', NOTHING_OF_A, list),
  'POST /api/v1/users/invitations': jwt('users:write', PERMISSION_DENIED, {
    body: (a) => ({ email: `invited-${a.orgId.slice(0, 8)}@example.test`, name: 'planted', scope: 'organization', role: 'readonly', orgId: a.orgId }),
    probes: (a) => [{
      name: 'a partner user of A’s partner', credential: 'partner-admin',
      payload: { email: 'invited-p@example.test', name: 'planted', scope: 'partner', role: 'readonly', partnerId: a.partnerId }, expect: PERMISSION_DENIED,
    }],
  }),
  'DELETE /api/v1/users/invitations/{id}': jwt('users:write', PERMISSION_DENIED),
  'POST /api/v1/auth/invitations/accept': { public: 'the invitation token is the credential; it names its own tenant' },
  'POST /api/v1/auth/password/forgot': { public: 'answers alike for every address; the mailed link goes to the account’s own address' },
  'POST /api/v1/auth/sso/discover': { public: 'names the e-mail’s own tenant’s identity provider, or none; never another tenant’s for a known user' },
  'GET /api/v1/auth/sso/callback': { public: 'the state from discover is the credential; the identity provider vouches for the user' },
  // Names no tenant: it fetches the discovery document of an issuer the caller gives (nothing listens on port 9).
  'POST /api/v1/auth/sso/test': jwt('organizations:write', { status: 400, code: 'SSO_CONFIG_INVALID' }, {
    self: 'tries an identity provider; stores nothing', body: () => ({ issuer: 'http://127.0.0.1:9', clientId: 'probe' }),
  }),
  'POST /api/v1/auth/sso/exchange': { public: 'the one-time code from the callback is the credential' },
  'POST /api/v1/auth/password/reset': { public: 'the mailed reset token is the credential and speaks only for its own user' },

  'GET /api/v1/orgs/partners': systemOnly('organizations:read'),
  'POST /api/v1/orgs/partners': systemOnly('organizations:write'),
  'GET /api/v1/orgs/partners/{id}': systemOnly('organizations:read'),
  'PATCH /api/v1/orgs/partners/{id}': systemOnly('organizations:write'),
  'DELETE /api/v1/orgs/partners/{id}': systemOnly('organizations:write'),
  'GET /api/v1/orgs/partners/me': jwt('organizations:read', NOTHING_OF_A, { ...partnerOnly, self: 'the caller’s own partner' }),
  'PATCH /api/v1/orgs/partners/me': jwt('organizations:write', NOTHING_OF_A, { ...partnerOnly, self: 'the caller’s own partner' }),

  'GET /api/v1/orgs': jwt('organizations:read', NOTHING_OF_A, list),
  'GET /api/v1/orgs/organizations': jwt('organizations:read', NOTHING_OF_A, {
    ...partnerOnly, ...list,
    probes: searchProbes('/api/v1/orgs/organizations', 'Victim', ['partner-admin', 'partner-readonly'], 'partnerId'),
  }),
  'POST /api/v1/orgs/organizations': jwt('organizations:write', refuse(403, 'PARTNER_MISMATCH'), partnerOnly),
  // Only a system caller names another partner: B naming A's is refused before anything is read.
  // Without partnerId, A's organization ids in the order are dropped: the answer is B's own order.
  'PATCH /api/v1/orgs/organizations/order': jwt('organizations:write', refuse(403, 'PARTNER_MISMATCH'), {
    ...partnerOnly,
    probes: (a) => [{ name: 'B’s own order listing A’s organizations', credential: 'partner-admin', payload: { organizationOrder: [a.orgId, a.otherOrgId] }, expect: NOTHING_OF_A }],
  }),
  // DESIGN.md §3: hide existence; a partner-scope caller gets 404 for an organization it cannot see.
  'GET /api/v1/orgs/organizations/{id}': jwt('organizations:read', NOT_FOUND, partnerOnly),
  'PATCH /api/v1/orgs/organizations/{id}': jwt('organizations:write', NOT_FOUND, partnerOnly),
  'DELETE /api/v1/orgs/organizations/{id}': jwt('organizations:write', NOT_FOUND, partnerOnly),

  // API.md §2: sites follow SPEC, 403 for a site or organization out of reach.
  // A's sites are named "Site …", like B's own: B's search for "site" finds B's only.
  'GET /api/v1/orgs/sites': jwt('organizations:read', NOTHING_OF_A, {
    ...list,
    probes: searchProbes('/api/v1/orgs/sites', 'site', ['partner-admin', 'org-readonly'], 'orgId'),
  }),
  'POST /api/v1/orgs/sites': jwt('organizations:write', ORG_ACCESS_DENIED),
  'GET /api/v1/orgs/sites/{id}': jwt('organizations:read', SITE_ACCESS_DENIED),
  'PATCH /api/v1/orgs/sites/{id}': jwt('organizations:write', SITE_ACCESS_DENIED),
  'DELETE /api/v1/orgs/sites/{id}': jwt('organizations:write', SITE_ACCESS_DENIED),

  // API.md §2/§5: keys of an organization out of reach are 404; a create naming one is 403.
  'GET /api/v1/api-keys': jwt('organizations:read', NOTHING_OF_A, list),
  'POST /api/v1/api-keys': jwt('organizations:write', ORG_ACCESS_DENIED),
  'GET /api/v1/api-keys/{id}': jwt('organizations:read', NOT_FOUND),
  'PATCH /api/v1/api-keys/{id}': jwt('organizations:write', NOT_FOUND),
  'DELETE /api/v1/api-keys/{id}': jwt('organizations:write', NOT_FOUND),
  'POST /api/v1/api-keys/{id}/rotate': jwt('organizations:write', NOT_FOUND),

  // API.md §9: reach rules of API keys; a partner-wide destination of another partner is PARTNER_MISMATCH.
  'GET /api/v1/event-destinations': jwt('organizations:read', NOTHING_OF_A, list),
  'POST /api/v1/event-destinations': jwt('organizations:write', ORG_ACCESS_DENIED, {
    // Not orgId and partnerId together (400): the organization, then the partner in a probe.
    body: (a) => ({ name: 'planted', kind: 'syslog', url: 'syslog+tcp://collector.example:6514', orgId: a.orgId }),
    probes: (a) => [
      { name: 'a destination for all of A’s partner', credential: 'partner-admin', payload: { name: 'planted', kind: 'syslog', url: 'syslog+tcp://collector.example:6514', partnerId: a.partnerId }, expect: refuse(403, 'PARTNER_MISMATCH') },
    ],
  }),
  'GET /api/v1/event-destinations/{id}': jwt('organizations:read', NOT_FOUND),
  'PATCH /api/v1/event-destinations/{id}': jwt('organizations:write', NOT_FOUND),
  'DELETE /api/v1/event-destinations/{id}': jwt('organizations:write', NOT_FOUND),
  'POST /api/v1/event-destinations/{id}/rotate-secret': jwt('organizations:write', NOT_FOUND),
  'POST /api/v1/event-destinations/{id}/test': jwt('organizations:write', NOT_FOUND),
  'POST /api/v1/event-destinations/{id}/replay': jwt('organizations:write', NOT_FOUND, { body: () => ({ fromSeq: 1 }) }),
  'GET /api/v1/event-destinations/{id}/deliveries': jwt('organizations:read', NOT_FOUND),

  'GET /api/v1/enrollment-keys': jwt('organizations:read', NOTHING_OF_A, list),
  'POST /api/v1/enrollment-keys': jwt('organizations:write', ORG_ACCESS_DENIED, {
    // API.md §5: a siteId that is not a site of the key's organization is 400.
    probes: (a) => [{ name: 'a key of B’s organization (inferred) for A’s site', credential: 'org-admin', payload: { name: 'planted', siteId: a.siteId }, expect: VALIDATION_FAILED }],
  }),
  'GET /api/v1/enrollment-keys/{id}': jwt('organizations:read', NOT_FOUND),
  'DELETE /api/v1/enrollment-keys/{id}': jwt('organizations:write', NOT_FOUND),
  'POST /api/v1/enrollment-keys/{id}/rotate': jwt('organizations:write', NOT_FOUND),

  'POST /api/v1/agents/enroll': {
    public: 'the enrollment key in the body is the credential; probed with tenant B’s own key aimed at A',
    probes: (a) => {
      const device = { enrollmentKey: a.attacker.enrollmentKey, hostname: 'planted', osType: 'linux', osVersion: '6.1', architecture: 'x86_64', agentVersion: '1.0.0' };
      const mismatch = refuse(403, 'ENROLLMENT_KEY_ORG_MISMATCH');
      return [
        { name: 'B’s key naming A’s organization and site', payload: { ...device, orgId: a.orgId, siteId: a.siteId }, expect: mismatch },
        { name: 'B’s key naming A’s site only', payload: { ...device, siteId: a.siteId }, expect: mismatch },
      ];
    },
  },
  // API.md §6: agent routes take only the agent's own token; B's device token does not speak for A's.
  'POST /api/v1/agents/{id}/heartbeat': agent,
  'POST /api/v1/agents/{id}/logs': agent,
  'PUT /api/v1/agents/{id}/eventlogs': agent,
  'GET /api/v1/agents/{id}/ws': agent, // the agent’s WebSocket; the token is checked before the upgrade (or the 426)

  // API.md §6: a device of an organization out of reach is 404, like one that does not exist.
  'GET /api/v1/devices': jwtOrKey('devices:read', NOTHING_OF_A, {
    ...list,
    probes: searchProbes('/api/v1/devices', 'victim-host', ['partner-admin', 'org-readonly', 'api-key'], 'orgId'),
  }),
  'GET /api/v1/devices/{id}': jwtOrKey('devices:read', NOT_FOUND),
  'PATCH /api/v1/devices/{id}': jwtOrKey('devices:write', NOT_FOUND, {
    probes: (a) => (['partner-admin', 'org-technician', 'api-key'] as const).map((credential) => ({
      name: 'B’s own device moved into A’s site', credential, url: `/api/v1/devices/${a.attacker.deviceId}`, payload: { siteId: a.siteId }, expect: VALIDATION_FAILED,
    })),
  }),
  'DELETE /api/v1/devices/{id}': jwtOrKey('devices:write', NOT_FOUND),
  'GET /api/v1/devices/{id}/diagnostic-logs': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/devices/{id}/eventlogs': jwtOrKey('devices:read', NOT_FOUND),
  // Live queries check reach before anything is sent to the agent (A's device is offline: a
  // broken check would show as 409 DEVICE_OFFLINE instead of 404).
  'GET /api/v1/system-tools/devices/{deviceId}/eventlogs': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/system-tools/devices/{deviceId}/eventlogs/{name}': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/system-tools/devices/{deviceId}/eventlogs/{name}/events': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/system-tools/devices/{deviceId}/eventlogs/{name}/events/{recordId}': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/devices/{deviceId}/live/eventlogs': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/devices/{deviceId}/live/eventlogs/{name}': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/devices/{deviceId}/live/eventlogs/{name}/events': jwtOrKey('devices:read', NOT_FOUND),
  'GET /api/v1/devices/{deviceId}/live/eventlogs/{name}/events/{recordId}': jwtOrKey('devices:read', NOT_FOUND),

  // API.md §4: an orgId filter out of reach gives an empty list; §8: entries, verify, export, reports.
  'GET /api/v1/audit-logs': jwtOrKey('audit:read', NOTHING_OF_A, list),
  'GET /api/v1/audit-logs/logs': jwtOrKey('audit:read', NOTHING_OF_A, list),
  'GET /api/v1/audit-logs/search': jwtOrKey('audit:read', NOTHING_OF_A, { ...list, query: { q: 'user' } }),
  'GET /api/v1/audit-logs/logs/{id}': jwtOrKey('audit:read', NOT_FOUND),
  'GET /api/v1/audit-logs/verify': jwtOrKey('audit:read', NOT_FOUND),
  'GET /api/v1/audit-logs/export': jwtOrKey('audit:export', NOTHING_OF_A, list),
  'GET /api/v1/audit-logs/checkpoints': jwtOrKey('audit:read', NOTHING_OF_A, list),
  'GET /api/v1/audit-logs/public-key': jwtOrKey('audit:read', NOTHING_OF_A, { self: 'the platform’s checkpoint-signing public key, the same for every caller' }),
  'GET /api/v1/audit-logs/reports/security-events': jwtOrKey('audit:read', NOTHING_OF_A, list),
  'GET /api/v1/audit-logs/reports/compliance': jwtOrKey('audit:read', NOTHING_OF_A, list),
  'GET /api/v1/audit-logs/retention': jwt('audit:read', NOT_FOUND),
  'PUT /api/v1/audit-logs/retention': jwt('organizations:write', NOT_FOUND),
};

/** What credential `c` of tenant B must get from the route (API.md §2 and §5, in the guard's order). */
export function expectedFor(e: SweptExpectation, c: Credential): Outcome {
  // An agent token is no JWT, and on /agents/:id/… it is not the token of A's device.
  if (c === 'agent' || e.via === 'agent') return UNAUTHENTICATED;
  if (c === 'api-key') {
    // API.md §5: an X-API-Key on a route that takes JWT only is no credential there.
    return e.via === 'jwt' ? UNAUTHENTICATED : e.reach;
  }
  if (e.via === 'key') return UNAUTHENTICATED;
  const [scope, role] = c.split('-') as ['partner' | 'org', 'admin' | 'technician' | 'readonly'];
  const callerScope = scope === 'org' ? 'organization' : 'partner';
  if (e.scopes && !e.scopes.includes(callerScope)) return PERMISSION_DENIED;
  if (e.permission && !ROLE_PERMISSIONS[role].includes(e.permission)) return PERMISSION_DENIED;
  return e.reach;
}
