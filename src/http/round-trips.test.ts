// What each request asks of PostgreSQL (issue 19): its transactions and the statements inside them,
// per route, on the warm path (caller and API-key caches filled, as they are for a client that keeps
// calling), and the round trips they make: the writes a request waits for an answer to. Each
// statement is one, and so is each COMMIT waited for, but BEGIN and the tenant scope go out with a
// transaction's first statement, a statement queued by queryLater (an audit entry) with the next
// statement or the COMMIT; a read-only transaction has neither BEGIN nor COMMIT (its scope goes with
// each statement, one implicit transaction).
// A change that adds a statement, a transaction or a round trip to a route fails here; one that
// removes some fails too, so the table (and the README's copy) stays true.
// ROUND_TRIPS_PRINT=1 prints the measured table as Markdown. The audit module's routes are left out.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { openTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import { countingDatabase, type CountingDatabase } from '../../test/support/round-trips.js';
import {
  createApiKey, createDevice, createEnrollmentKey, createOrg, createPartner, createSite, createUser, TEST_PASSWORD,
  type TestOrg, type TestUser,
} from '../../test/support/factory.js';
import { bearer, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { totpCode } from '../identity/totp.js';
import { hashLinkToken, newLinkToken } from '../identity/link-tokens.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';

interface Expected {
  transactions: number;
  statements: number;
  roundTrips: number;
  note?: string;
}

const counts = (transactions: number, statements: number, roundTrips: number, note?: string): Expected => ({ transactions, statements, roundTrips, ...(note ? { note } : {}) });

/**
 * Keyed "METHOD /path" as the served OpenAPI document names the route; a second case of one route
 * adds " · what differs". Callers: a partner admin reaching all of its organizations (MFA-verified),
 * a system admin for partner administration, the device's agent, an API key with every scope.
 */
export const EXPECTED: Record<string, Expected> = {
  'POST /api/v1/auth/login': counts(2, 5, 6, 'the attempt is reserved and committed before the password is hashed, with no connection held while hashing; the e-mail’s tenant is asked whether it enforces single sign-on'),
  'POST /api/v1/auth/login · MFA challenge': counts(2, 4, 6, 'as above; the second transaction only settles the attempt'),
  'POST /api/v1/auth/mfa/verify': counts(1, 6, 6, 'reservation, code check and new session under the sign-in locks'),
  'POST /api/v1/auth/refresh': counts(1, 2, 3, 'token and session locked (user alongside), then spent and replaced in one statement'),
  'POST /api/v1/auth/logout': counts(1, 2, 2, 'session ended in one statement, then audited'),
  'GET /api/v1/auth/me': counts(0, 0, 0, 'caller cache warm'),
  'POST /api/v1/auth/mfa/setup': counts(1, 1, 2),
  'POST /api/v1/auth/mfa/enable': counts(1, 3, 3, 'the pending secret is read to check the code'),
  'POST /api/v1/auth/register': counts(1, 4, 3, 'partner (slug decided in the insert), user, two audit entries'),
  'GET /api/v1/auth/api-key': counts(0, 0, 0, 'API key cache warm'),
  'GET /api/v1/auth/sessions': counts(1, 1, 1, 'page and total in one statement'),
  'DELETE /api/v1/auth/sessions/{id}': counts(1, 2, 2, 'ended only if it is the caller\'s own and live, then audited'),
  'POST /api/v1/auth/sessions/revoke-others': counts(1, 2, 2),
  'POST /api/v1/auth/mfa/recovery-codes': counts(1, 3, 3, 'user locked, codes replaced in one statement, audited'),
  'POST /api/v1/auth/password/change': counts(2, 7, 8, 'the try is counted under the sign-in limits and committed, then the current password is checked (argon2) with no connection held'),
  'POST /api/v1/auth/password/forgot': counts(2, 4, 6, 'the request counted under its limits; after the answer, one transaction makes the token for the mail'),
  'POST /api/v1/auth/password/reset': counts(2, 5, 6, 'the token checked before the password is hashed, then used, the password set and every session ended'),
  'POST /api/v1/auth/invitations/accept': counts(2, 7, 7, 'the token checked before the password is hashed, then claimed with the user created and the session started'),
  'POST /api/v1/auth/sso/discover': counts(1, 3, 4, 'the e-mail’s user and the tenant configurations claiming its domain'),
  'POST /api/v1/auth/sso/exchange · unknown code': counts(0, 0, 0, 'a malformed code is refused before any lookup'),
  'POST /api/v1/auth/sso/test · provider down': counts(0, 0, 0, 'only the provider is asked'),

  'GET /api/v1/users': counts(1, 1, 1, 'page and total in one statement'),
  'GET /api/v1/users · skipCount': counts(1, 1, 1),
  'POST /api/v1/users': counts(1, 2, 2, 'the insert checks the organization (or partner) is live'),
  'GET /api/v1/users/{id}': counts(1, 1, 1),
  'PATCH /api/v1/users/{id}': counts(1, 3, 3, 'read first: the right to manage the user is decided before an e-mail conflict'),
  'DELETE /api/v1/users/{id}': counts(1, 2, 2, 'soft delete and the end of its sessions in one statement'),
  'GET /api/v1/users/invitations': counts(1, 1, 1, 'page and total in one statement'),
  'GET /api/v1/users/invitations · skipCount': counts(1, 1, 1),
  'POST /api/v1/users/invitations': counts(2, 3, 4, 'the invitation stored, then audited once the mail is out (a failed mail withdraws it)'),
  'DELETE /api/v1/users/invitations/{id}': counts(1, 2, 2),

  'GET /api/v1/orgs/partners': counts(1, 1, 1),
  'GET /api/v1/orgs/partners · skipCount': counts(1, 1, 1),
  'POST /api/v1/orgs/partners': counts(1, 2, 2),
  'GET /api/v1/orgs/partners/me': counts(1, 1, 1),
  'PATCH /api/v1/orgs/partners/me': counts(1, 3, 3, 'settings are merged over the stored ones, read locked'),
  'PATCH /api/v1/orgs/partners/me · without settings': counts(1, 2, 2),
  'GET /api/v1/orgs/partners/{id}': counts(1, 1, 1),
  'PATCH /api/v1/orgs/partners/{id}': counts(1, 2, 2),
  'DELETE /api/v1/orgs/partners/{id}': counts(1, 2, 2),

  'GET /api/v1/orgs': counts(1, 1, 1),
  'GET /api/v1/orgs/organizations': counts(1, 1, 1),
  'GET /api/v1/orgs/organizations · skipCount': counts(1, 1, 1),
  'POST /api/v1/orgs/organizations': counts(1, 3, 3, 'partner locked, then the insert counts against the cap'),
  'PATCH /api/v1/orgs/organizations/order': counts(1, 2, 3),
  'PATCH /api/v1/orgs/organizations/order · partner user reaching some organizations': counts(1, 5, 6, 'the other organizations’ slots are read under the partner’s whole reach, then the scope is narrowed again'),
  'GET /api/v1/orgs/organizations/{id}': counts(1, 1, 1),
  'PATCH /api/v1/orgs/organizations/{id}': counts(1, 2, 2),
  'DELETE /api/v1/orgs/organizations/{id}': counts(1, 2, 2),

  'GET /api/v1/orgs/sites': counts(0, 0, 0, 'site list cache warm'),
  'GET /api/v1/orgs/sites · after a site changed': counts(1, 1, 1, 'page and total in one statement'),
  'POST /api/v1/orgs/sites': counts(1, 3, 3),
  'GET /api/v1/orgs/sites/{id}': counts(1, 1, 1),
  'PATCH /api/v1/orgs/sites/{id}': counts(1, 2, 2),
  'DELETE /api/v1/orgs/sites/{id}': counts(1, 3, 3),

  'GET /api/v1/api-keys': counts(1, 1, 1),
  'GET /api/v1/api-keys · skipCount': counts(1, 1, 1),
  'POST /api/v1/api-keys': counts(1, 2, 2, 'the insert checks the organization is live'),
  'GET /api/v1/api-keys/{id}': counts(1, 1, 1),
  'PATCH /api/v1/api-keys/{id}': counts(1, 2, 2, 'one statement reads the active key locked and changes it'),
  'DELETE /api/v1/api-keys/{id}': counts(1, 2, 2),
  'POST /api/v1/api-keys/{id}/rotate': counts(1, 2, 2),

  'GET /api/v1/event-destinations': counts(1, 1, 1),
  'GET /api/v1/event-destinations · skipCount': counts(1, 1, 1),
  'POST /api/v1/event-destinations': counts(1, 4, 4, 'owner checked and locked, the insert counting the owner’s destinations, its cursors, audit'),
  'GET /api/v1/event-destinations/{id}': counts(1, 1, 1),
  'PATCH /api/v1/event-destinations/{id}': counts(1, 3, 3),
  'DELETE /api/v1/event-destinations/{id}': counts(1, 3, 3),
  'POST /api/v1/event-destinations/{id}/rotate-secret': counts(1, 3, 3),
  'POST /api/v1/event-destinations/{id}/test': counts(2, 2, 4, 'reach, then the secrets: no transaction open while the receiver answers'),
  'POST /api/v1/event-destinations/{id}/replay': counts(1, 3, 3),
  'GET /api/v1/event-destinations/{id}/deliveries': counts(1, 2, 2, 'destination reach, then page and total in one statement'),

  'GET /api/v1/enrollment-keys': counts(1, 1, 1),
  'GET /api/v1/enrollment-keys · skipCount': counts(1, 1, 1),
  'POST /api/v1/enrollment-keys': counts(1, 2, 2, 'the insert checks the organization and the site'),
  'GET /api/v1/enrollment-keys/{id}': counts(1, 1, 1),
  'DELETE /api/v1/enrollment-keys/{id}': counts(1, 2, 2),
  'POST /api/v1/enrollment-keys/{id}/rotate': counts(1, 2, 2),

  'GET /api/v1/devices': counts(1, 1, 1),
  'GET /api/v1/devices · skipCount': counts(1, 1, 1),
  'GET /api/v1/devices · API key': counts(1, 1, 1, 'API key cache warm'),
  'GET /api/v1/devices/{id}': counts(1, 1, 1),
  'PATCH /api/v1/devices/{id}': counts(1, 4, 4),
  'DELETE /api/v1/devices/{id}': counts(1, 3, 3),
  'GET /api/v1/devices/{id}/diagnostic-logs': counts(1, 2, 2, 'device reach, then page and total in one statement'),
  'GET /api/v1/devices/{id}/diagnostic-logs · skipCount': counts(1, 2, 2),
  'GET /api/v1/devices/{id}/eventlogs': counts(1, 2, 2, 'device reach, then page and total in one statement'),
  'GET /api/v1/devices/{id}/eventlogs · skipCount': counts(1, 2, 2),

  'POST /api/v1/agents/enroll': counts(1, 5, 5, 'the key’s use is counted in one statement'),
  'POST /api/v1/agents/{id}/heartbeat': counts(2, 2, 2, 'the agent token is looked up in a read-only transaction of its own (no cache); the heartbeat goes out with the COMMIT'),
  'POST /api/v1/agents/{id}/logs': counts(2, 2, 3, 'agent token as above'),
  'PUT /api/v1/agents/{id}/eventlogs': counts(2, 3, 3, 'agent token as above'),
};

type Device = Awaited<ReturnType<typeof createDevice>>;

interface Fixture {
  t: TestApp;
  partnerId: string;
  orgA: TestOrg;
  orgB: TestOrg;
  siteId: string;
  device: Device;
  apiKey: string;
  /** Partner admin reaching every organization of the partner, MFA-verified. */
  admin: Session;
  /** System admin. */
  system: Session;
}

/** A request, the status it must get, and whether to send it once first (a cache it fills). */
interface Case {
  request: InjectOptions;
  status: number;
  repeat?: boolean;
}

const unique = () => randomBytes(4).toString('hex');
const as = (session: Session, method: InjectOptions['method'], url: string, payload?: object): InjectOptions =>
  ({ method, url: `/api/v1${url}`, headers: bearer(session), ...(payload ? { payload: payload as Record<string, unknown> } : {}) });
const withKey = (key: string, method: InjectOptions['method'], url: string): InjectOptions => ({ method, url: `/api/v1${url}`, headers: { 'x-api-key': key } });
const asAgent = (device: Device, method: InjectOptions['method'], path: string, payload: object): InjectOptions =>
  ({ method, url: `/api/v1/agents/${device.agentId}/${path}`, headers: { authorization: `Bearer ${device.authToken}` }, payload: payload as Record<string, unknown> });
const now = () => new Date().toISOString();
const AGENT = { hostname: 'ws-01', osType: 'windows', osVersion: '11', architecture: 'x86_64', agentVersion: '2.1.0' };

async function call(f: Fixture, request: InjectOptions, status: number) {
  const res = await f.t.app.inject(request);
  assert.equal(res.statusCode, status, `${request.method} ${request.url}: ${res.body}`);
  return res.json();
}

/** A user of organization A who signed in without MFA. */
async function freshSession(f: Fixture): Promise<{ user: TestUser; session: Session }> {
  const user = await createUser(f.t.db, { scope: 'organization', orgId: f.orgA.id });
  return { user, session: await login(f.t.app, user) };
}

const list = (f: Fixture, url: string, skipCount = false): Case =>
  ({ request: as(f.admin, 'GET', `${url}${skipCount ? `${url.includes('?') ? '&' : '?'}skipCount=true` : ''}`), status: 200 });

export const REQUESTS: Record<string, (f: Fixture) => Promise<Case>> = {
  'POST /api/v1/auth/login': async (f) => {
    const user = await createUser(f.t.db, { scope: 'organization', orgId: f.orgA.id });
    return { request: { method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: TEST_PASSWORD } }, status: 200 };
  },
  'POST /api/v1/auth/login · MFA challenge': async (f) => {
    const user = await createUser(f.t.db, { scope: 'organization', orgId: f.orgA.id });
    await loginWithMfa(f.t.app, user, f.t.clock);
    return { request: { method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: TEST_PASSWORD } }, status: 200 };
  },
  'POST /api/v1/auth/mfa/verify': async (f) => {
    const user = await createUser(f.t.db, { scope: 'organization', orgId: f.orgA.id });
    const { totpSecret } = await loginWithMfa(f.t.app, user, f.t.clock);
    f.t.clock.advance(30_000); // a TOTP step not used yet
    const { mfaToken } = await call(f, { method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: TEST_PASSWORD } }, 200);
    return { request: { method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken, code: totpCode(totpSecret!, f.t.clock.now()) } }, status: 200 };
  },
  'POST /api/v1/auth/refresh': async (f) => {
    const { session } = await freshSession(f);
    return { request: { method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: session.refreshToken } }, status: 200 };
  },
  'POST /api/v1/auth/logout': async (f) => {
    const { session } = await freshSession(f);
    return { request: { method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: session.refreshToken } }, status: 200 };
  },
  'GET /api/v1/auth/me': async (f) => ({ request: as(f.admin, 'GET', '/auth/me'), status: 200 }),
  'POST /api/v1/auth/mfa/setup': async (f) => ({ request: as((await freshSession(f)).session, 'POST', '/auth/mfa/setup'), status: 200 }),
  'POST /api/v1/auth/mfa/enable': async (f) => {
    const { session } = await freshSession(f);
    const { secret } = await call(f, as(session, 'POST', '/auth/mfa/setup'), 200);
    return { request: as(session, 'POST', '/auth/mfa/enable', { code: totpCode(secret, f.t.clock.now()) }), status: 200 };
  },
  'POST /api/v1/auth/register': async () => ({
    request: { method: 'POST', url: '/api/v1/auth/register', payload: { partnerName: `Signup ${unique()}`, name: 'Owner', email: `owner-${unique()}@example.test`, password: 'long-enough-pw' } },
    status: 201,
  }),
  'GET /api/v1/auth/api-key': async (f) => ({ request: withKey(f.apiKey, 'GET', '/auth/api-key'), status: 200 }),
  'GET /api/v1/auth/sessions': async (f) => ({ request: as(f.admin, 'GET', '/auth/sessions'), status: 200 }),
  'DELETE /api/v1/auth/sessions/{id}': async (f) => {
    const { user, session } = await freshSession(f);
    const other = await login(f.t.app, user);
    const { data } = await call(f, as(other, 'GET', '/auth/sessions'), 200);
    return { request: as(session, 'DELETE', `/auth/sessions/${(data as { id: string; current: boolean }[]).find((x) => x.current)!.id}`), status: 200 };
  },
  'POST /api/v1/auth/sessions/revoke-others': async (f) => {
    const { user, session } = await freshSession(f);
    await login(f.t.app, user);
    return { request: as(session, 'POST', '/auth/sessions/revoke-others'), status: 200 };
  },
  'POST /api/v1/auth/mfa/recovery-codes': async (f) => ({ request: as(f.admin, 'POST', '/auth/mfa/recovery-codes'), status: 200 }),
  'POST /api/v1/auth/password/change': async (f) => {
    const { session } = await freshSession(f);
    return { request: as(session, 'POST', '/auth/password/change', { currentPassword: TEST_PASSWORD, newPassword: 'a-changed-password' }), status: 200 };
  },

  'POST /api/v1/auth/password/forgot': async (f) => {
    const { user } = await freshSession(f);
    return { request: { method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email: user.email } }, status: 202 };
  },
  'POST /api/v1/auth/password/reset': async (f) => {
    const { user } = await freshSession(f);
    const token = newLinkToken('pwr');
    await withTenant(f.t.db, SYSTEM_SCOPE, (tx) => tx.query(
      `insert into password_resets (user_id, token_hash, expires_at) values ($1, $2, now() + interval '30 minutes')`, [user.id, hashLinkToken(token)]));
    return { request: { method: 'POST', url: '/api/v1/auth/password/reset', payload: { token, password: 'a-reset-password' } }, status: 200 };
  },
  'POST /api/v1/auth/invitations/accept': async (f) => {
    const token = newLinkToken('inv');
    await withTenant(f.t.db, SYSTEM_SCOPE, (tx) => tx.query(
      `insert into user_invitations (email, name, scope, partner_id, org_id, role, token_hash, expires_at)
       values ($1, 'Invitee', 'organization', $2, $3, 'readonly', $4, now() + interval '7 days')`,
      [`invitee-${unique()}@example.test`, f.partnerId, f.orgA.id, hashLinkToken(token)]));
    return { request: { method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token, password: 'an-invitee-password' } }, status: 200 };
  },
  'POST /api/v1/auth/sso/discover': async () => ({ request: { method: 'POST', url: '/api/v1/auth/sso/discover', payload: { email: `nobody-${unique()}@example.test` } }, status: 200 }),
  'POST /api/v1/auth/sso/test · provider down': async (f) => ({ request: as(f.admin, 'POST', '/auth/sso/test', { issuer: 'http://127.0.0.1:9', clientId: 'probe' }), status: 400 }),
  'POST /api/v1/auth/sso/exchange · unknown code': async () => ({ request: { method: 'POST', url: '/api/v1/auth/sso/exchange', payload: { code: `made-up-${unique()}` } }, status: 401 }),

  'GET /api/v1/users': async (f) => list(f, '/users'),
  'GET /api/v1/users/invitations': async (f) => list(f, '/users/invitations'),
  'GET /api/v1/users/invitations · skipCount': async (f) => list(f, '/users/invitations', true),
  'POST /api/v1/users/invitations': async (f) => ({
    request: as(f.admin, 'POST', '/users/invitations', { email: `invited-${unique()}@example.test`, name: 'Invited', scope: 'organization', role: 'readonly', orgId: f.orgA.id }),
    status: 201,
  }),
  'DELETE /api/v1/users/invitations/{id}': async (f) => {
    const { id } = await call(f, as(f.admin, 'POST', '/users/invitations', { email: `invited-${unique()}@example.test`, name: 'Invited', scope: 'organization', role: 'readonly', orgId: f.orgA.id }), 201);
    return { request: as(f.admin, 'DELETE', `/users/invitations/${id}`), status: 200 };
  },
  'GET /api/v1/users · skipCount': async (f) => list(f, '/users', true),
  'POST /api/v1/users': async (f) => ({
    request: as(f.admin, 'POST', '/users', { email: `new-${unique()}@example.test`, name: 'New', password: 'long-enough-pw', scope: 'organization', role: 'readonly', orgId: f.orgA.id }),
    status: 201,
  }),
  'GET /api/v1/users/{id}': async (f) => ({ request: as(f.admin, 'GET', `/users/${(await freshSession(f)).user.id}`), status: 200 }),
  'PATCH /api/v1/users/{id}': async (f) => {
    const user = await createUser(f.t.db, { scope: 'organization', orgId: f.orgA.id });
    return { request: as(f.admin, 'PATCH', `/users/${user.id}`, { name: 'Renamed' }), status: 200 };
  },
  'DELETE /api/v1/users/{id}': async (f) => {
    const user = await createUser(f.t.db, { scope: 'organization', orgId: f.orgA.id });
    return { request: as(f.admin, 'DELETE', `/users/${user.id}`), status: 200 };
  },

  'GET /api/v1/orgs/partners': async (f) => ({ request: as(f.system, 'GET', '/orgs/partners'), status: 200 }),
  'GET /api/v1/orgs/partners · skipCount': async (f) => ({ request: as(f.system, 'GET', '/orgs/partners?skipCount=true'), status: 200 }),
  'POST /api/v1/orgs/partners': async (f) => ({ request: as(f.system, 'POST', '/orgs/partners', { name: 'Provisioned', slug: `p-${unique()}` }), status: 201 }),
  'GET /api/v1/orgs/partners/me': async (f) => ({ request: as(f.admin, 'GET', '/orgs/partners/me'), status: 200 }),
  'PATCH /api/v1/orgs/partners/me': async (f) => ({ request: as(f.admin, 'PATCH', '/orgs/partners/me', { settings: { timezone: 'Europe/Zurich' } }), status: 200 }),
  'PATCH /api/v1/orgs/partners/me · without settings': async (f) => ({ request: as(f.admin, 'PATCH', '/orgs/partners/me', { billingEmail: 'billing@example.test' }), status: 200 }),
  'GET /api/v1/orgs/partners/{id}': async (f) => ({ request: as(f.system, 'GET', `/orgs/partners/${f.partnerId}`), status: 200 }),
  'PATCH /api/v1/orgs/partners/{id}': async (f) => ({ request: as(f.system, 'PATCH', `/orgs/partners/${(await createPartner(f.t.db)).id}`, { name: 'Renamed' }), status: 200 }),
  'DELETE /api/v1/orgs/partners/{id}': async (f) => ({ request: as(f.system, 'DELETE', `/orgs/partners/${(await createPartner(f.t.db)).id}`), status: 200 }),

  'GET /api/v1/orgs': async (f) => ({ request: as(f.admin, 'GET', '/orgs'), status: 200 }),
  'GET /api/v1/orgs/organizations': async (f) => list(f, '/orgs/organizations'),
  'GET /api/v1/orgs/organizations · skipCount': async (f) => list(f, '/orgs/organizations', true),
  'POST /api/v1/orgs/organizations': async (f) => ({ request: as(f.admin, 'POST', '/orgs/organizations', { name: 'New org', slug: `o-${unique()}` }), status: 201 }),
  'PATCH /api/v1/orgs/organizations/order': async (f) => ({
    request: as(f.admin, 'PATCH', '/orgs/organizations/order', { organizationOrder: [f.orgB.id, f.orgA.id] }),
    status: 200,
  }),
  'PATCH /api/v1/orgs/organizations/order · partner user reaching some organizations': async (f) => {
    const narrow = await createUser(f.t.db, { scope: 'partner', partnerId: f.partnerId, orgAccess: 'selected', orgIds: [f.orgA.id, f.orgB.id] });
    return { request: as(await login(f.t.app, narrow), 'PATCH', '/orgs/organizations/order', { organizationOrder: [f.orgA.id, f.orgB.id] }), status: 200 };
  },
  'GET /api/v1/orgs/organizations/{id}': async (f) => ({ request: as(f.admin, 'GET', `/orgs/organizations/${f.orgA.id}`), status: 200 }),
  'PATCH /api/v1/orgs/organizations/{id}': async (f) => ({ request: as(f.admin, 'PATCH', `/orgs/organizations/${f.orgB.id}`, { name: `Org ${unique()}` }), status: 200 }),
  'DELETE /api/v1/orgs/organizations/{id}': async (f) => ({ request: as(f.admin, 'DELETE', `/orgs/organizations/${(await createOrg(f.t.db, f.partnerId)).id}`), status: 200 }),

  'GET /api/v1/orgs/sites': async (f) => ({ ...list(f, '/orgs/sites'), repeat: true }),
  'GET /api/v1/orgs/sites · after a site changed': async (f) => {
    await call(f, as(f.admin, 'PATCH', `/orgs/sites/${f.siteId}`, { name: `Site ${unique()}` }), 200);
    return list(f, '/orgs/sites');
  },
  'POST /api/v1/orgs/sites': async (f) => ({ request: as(f.admin, 'POST', '/orgs/sites', { orgId: f.orgA.id, name: 'New site' }), status: 201 }),
  'GET /api/v1/orgs/sites/{id}': async (f) => ({ request: as(f.admin, 'GET', `/orgs/sites/${f.siteId}`), status: 200 }),
  'PATCH /api/v1/orgs/sites/{id}': async (f) => ({ request: as(f.admin, 'PATCH', `/orgs/sites/${f.siteId}`, { name: `Site ${unique()}` }), status: 200 }),
  'DELETE /api/v1/orgs/sites/{id}': async (f) => ({ request: as(f.admin, 'DELETE', `/orgs/sites/${(await createSite(f.t.db, f.orgA.id)).id}`), status: 200 }),

  'GET /api/v1/api-keys': async (f) => list(f, '/api-keys'),
  'GET /api/v1/api-keys · skipCount': async (f) => list(f, '/api-keys', true),
  'POST /api/v1/api-keys': async (f) => ({ request: as(f.admin, 'POST', '/api-keys', { orgId: f.orgA.id, name: 'Automation', scopes: ['devices:read'] }), status: 201 }),
  'GET /api/v1/api-keys/{id}': async (f) => ({ request: as(f.admin, 'GET', `/api-keys/${(await createApiKey(f.t.db, f.orgA.id)).id}`), status: 200 }),
  'PATCH /api/v1/api-keys/{id}': async (f) => ({ request: as(f.admin, 'PATCH', `/api-keys/${(await createApiKey(f.t.db, f.orgA.id)).id}`, { name: 'Renamed', scopes: ['devices:read'] }), status: 200 }),
  'DELETE /api/v1/api-keys/{id}': async (f) => ({ request: as(f.admin, 'DELETE', `/api-keys/${(await createApiKey(f.t.db, f.orgA.id)).id}`), status: 200 }),
  'POST /api/v1/api-keys/{id}/rotate': async (f) => ({ request: as(f.admin, 'POST', `/api-keys/${(await createApiKey(f.t.db, f.orgA.id)).id}/rotate`), status: 200 }),

  'GET /api/v1/event-destinations': async (f) => list(f, '/event-destinations'),
  'GET /api/v1/event-destinations · skipCount': async (f) => list(f, '/event-destinations', true),
  'POST /api/v1/event-destinations': async (f) => ({ request: as(f.admin, 'POST', '/event-destinations', destinationBody(f)), status: 201 }),
  'GET /api/v1/event-destinations/{id}': async (f) => ({ request: as(f.admin, 'GET', `/event-destinations/${await destination(f)}`), status: 200 }),
  'PATCH /api/v1/event-destinations/{id}': async (f) => ({ request: as(f.admin, 'PATCH', `/event-destinations/${await destination(f)}`, { name: 'Renamed' }), status: 200 }),
  'DELETE /api/v1/event-destinations/{id}': async (f) => ({ request: as(f.admin, 'DELETE', `/event-destinations/${await destination(f)}`), status: 200 }),
  'POST /api/v1/event-destinations/{id}/rotate-secret': async (f) => ({ request: as(f.admin, 'POST', `/event-destinations/${await destination(f)}/rotate-secret`), status: 200 }),
  'POST /api/v1/event-destinations/{id}/test': async (f) => ({ request: as(f.admin, 'POST', `/event-destinations/${await destination(f)}/test`), status: 200 }),
  'POST /api/v1/event-destinations/{id}/replay': async (f) => ({ request: as(f.admin, 'POST', `/event-destinations/${await destination(f)}/replay`, { fromSeq: 1 }), status: 202 }),
  'GET /api/v1/event-destinations/{id}/deliveries': async (f) => list(f, `/event-destinations/${await destination(f)}/deliveries`),

  'GET /api/v1/enrollment-keys': async (f) => list(f, '/enrollment-keys'),
  'GET /api/v1/enrollment-keys · skipCount': async (f) => list(f, '/enrollment-keys', true),
  'POST /api/v1/enrollment-keys': async (f) => ({ request: as(f.admin, 'POST', '/enrollment-keys', { orgId: f.orgA.id, siteId: f.siteId, name: 'Rollout' }), status: 201 }),
  'GET /api/v1/enrollment-keys/{id}': async (f) => ({ request: as(f.admin, 'GET', `/enrollment-keys/${(await enrollmentKey(f)).id}`), status: 200 }),
  'DELETE /api/v1/enrollment-keys/{id}': async (f) => ({ request: as(f.admin, 'DELETE', `/enrollment-keys/${(await enrollmentKey(f)).id}`), status: 200 }),
  'POST /api/v1/enrollment-keys/{id}/rotate': async (f) => ({ request: as(f.admin, 'POST', `/enrollment-keys/${(await enrollmentKey(f)).id}/rotate`, { maxUsage: 5 }), status: 200 }),

  'GET /api/v1/devices': async (f) => list(f, '/devices'),
  'GET /api/v1/devices · skipCount': async (f) => list(f, '/devices', true),
  'GET /api/v1/devices · API key': async (f) => ({ request: withKey(f.apiKey, 'GET', '/devices'), status: 200 }),
  'GET /api/v1/devices/{id}': async (f) => ({ request: as(f.admin, 'GET', `/devices/${f.device.id}`), status: 200 }),
  'PATCH /api/v1/devices/{id}': async (f) => {
    const device = await createDevice(f.t.db, f.orgA.id);
    return { request: as(f.admin, 'PATCH', `/devices/${device.id}`, { siteId: f.siteId }), status: 200 };
  },
  'DELETE /api/v1/devices/{id}': async (f) => ({ request: as(f.admin, 'DELETE', `/devices/${(await createDevice(f.t.db, f.orgA.id)).id}`), status: 200 }),
  'GET /api/v1/devices/{id}/diagnostic-logs': async (f) => list(f, `/devices/${f.device.id}/diagnostic-logs`),
  'GET /api/v1/devices/{id}/diagnostic-logs · skipCount': async (f) => list(f, `/devices/${f.device.id}/diagnostic-logs`, true),
  'GET /api/v1/devices/{id}/eventlogs': async (f) => list(f, `/devices/${f.device.id}/eventlogs`),
  'GET /api/v1/devices/{id}/eventlogs · skipCount': async (f) => list(f, `/devices/${f.device.id}/eventlogs`, true),

  'POST /api/v1/agents/enroll': async (f) => ({
    request: { method: 'POST', url: '/api/v1/agents/enroll', payload: { ...AGENT, enrollmentKey: (await enrollmentKey(f)).key } },
    status: 201,
  }),
  'POST /api/v1/agents/{id}/heartbeat': async (f) => ({ request: asAgent(f.device, 'POST', 'heartbeat', { agentVersion: '2.1.0' }), status: 200 }),
  'POST /api/v1/agents/{id}/logs': async (f) => ({
    request: asAgent(f.device, 'POST', 'logs', { logs: [1, 2, 3].map((i) => ({ timestamp: now(), level: 'info', component: 'heartbeat', message: `ok ${i}` })) }),
    status: 201,
  }),
  'PUT /api/v1/agents/{id}/eventlogs': async (f) => ({
    request: asAgent(f.device, 'PUT', 'eventlogs', { events: [1, 2, 3].map((i) => ({ timestamp: now(), level: 'info', category: 'system', source: 'svc', message: `m ${i}`, eventId: `${unique()}-${i}` })) }),
    status: 200,
  }),
};

/** A disabled webhook of organization A (so no sender works it during a measurement). */
const destinationBody = (f: Fixture) => ({ orgId: f.orgA.id, name: 'SIEM', kind: 'webhook', url: 'https://siem.example/hook', enabled: false });

async function destination(f: Fixture): Promise<string> {
  return String((await call(f, as(f.admin, 'POST', '/event-destinations', destinationBody(f)), 201)).id);
}

function enrollmentKey(f: Fixture) {
  return createEnrollmentKey(f.t.db, f.orgA.id, { pepper: f.t.config.enrollmentKeyPepper, siteId: f.siteId, maxUsage: 5 });
}

/**
 * Fills the caches a client that keeps calling has filled: the caller record of its session, or
 * its API key. Agent tokens have no cache; the public routes no credential.
 */
async function warmCredential(f: Fixture, request: InjectOptions): Promise<void> {
  const headers = (request.headers ?? {}) as Record<string, string>;
  if (headers['x-api-key']) await call(f, withKey(headers['x-api-key'], 'GET', '/auth/api-key'), 200);
  else if (headers.authorization && !request.url!.toString().startsWith('/api/v1/agents/')) {
    await call(f, { method: 'GET', url: '/api/v1/auth/me', headers: { authorization: headers.authorization } }, 200);
  }
}

function markdown(measured: Record<string, Omit<Expected, 'note'>>): string {
  const rows = Object.entries(measured).map(([route, m]) =>
    `| \`${route.replace(' · ', '` · ')}${route.includes(' · ') ? '' : '`'} | ${m.transactions} | ${m.statements} | ${m.roundTrips} | ${EXPECTED[route]?.note ?? ''} |`);
  return ['| Route | Transactions | Statements | Round trips (writes waited for) | Note |', '|---|---:|---:|---:|---|', ...rows].join('\n');
}

describe('database round trips per request', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let counting: CountingDatabase;
  let f: Fixture;

  before(async () => {
    const inner = await openTestDatabase('postgres');
    counting = countingDatabase(inner);
    const t = await testApp({ db: counting.db, env: { ALLOW_PARTNER_SIGNUP: 'true' } });
    const partner = await createPartner(t.db);
    const orgA = await createOrg(t.db, partner.id);
    const orgB = await createOrg(t.db, partner.id);
    const siteId = (await createSite(t.db, orgA.id)).id;
    const device = await createDevice(t.db, orgA.id, { siteId });
    const admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'all' }), t.clock);
    const system = await login(t.app, await createUser(t.db, { scope: 'system' }));
    f = { t, partnerId: partner.id, orgA, orgB, siteId, device, apiKey: (await createApiKey(t.db, orgA.id)).key, admin, system };
  });

  after(async () => {
    await f?.t.close();
    await f?.t.db.close();
  });

  it('covers every list and write route (audit aside) and the hot reads', async () => {
    assert.deepEqual(Object.keys(REQUESTS).sort(), Object.keys(EXPECTED).sort(), 'every expected route has its request, and every request its row');
    const doc = (await f.t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
    const routes = new Set(Object.keys(EXPECTED).map((key) => key.split(' · ')[0]));
    for (const [path, item] of Object.entries(doc.paths)) {
      if (path.startsWith('/api/v1/audit-logs')) continue; // the audit module is measured by its own owner
      for (const [method, op] of Object.entries(item)) {
        const isList = JSON.stringify(op.responses?.['200'] ?? {}).includes('"totalPages"');
        if (method === 'get' && !isList) continue;
        assert.ok(routes.has(`${method.toUpperCase()} ${path}`), `${method.toUpperCase()} ${path} is a list or a write: give it a row`);
      }
    }
  });

  it('makes the transactions, statements and round trips the table says, per route', async () => {
    const measured: Record<string, Omit<Expected, 'note'>> = {};
    for (const [route, make] of Object.entries(REQUESTS)) {
      const { request, status, repeat } = await make(f);
      if (repeat) await call(f, request, status);
      await warmCredential(f, request);
      // Awaited inside measure: inject starts its work only when awaited, which must be in the measured context.
      const { result, counts: c } = await counting.measure(async () => await f.t.app.inject(request));
      assert.equal(result.statusCode, status, `${route}: ${result.body}`);
      measured[route] = { transactions: c.transactions, statements: c.statements, roundTrips: c.roundTrips };
    }
    if (process.env.ROUND_TRIPS_PRINT) process.stdout.write(`\n${markdown(measured)}\n\n`);
    const expected = Object.fromEntries(Object.entries(EXPECTED).map(([route, { note: _, ...e }]) => [route, e]));
    assert.deepEqual(measured, expected);
  });
});
