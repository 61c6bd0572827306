// Tenant isolation, swept from the served OpenAPI document: every operation in it, with every
// credential type of tenant B (JWTs of each scope and role, MFA-verified so that a refusal is about
// reach and never about MFA; an API key holding `*`; a device's agent token), aimed at tenant A's
// ids. What each must get is in isolation-expectations.ts; an operation without an entry there
// fails the run, so a new route cannot ship without saying how it keeps tenants apart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { backends, privateTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import {
  createApiKey, createDevice, createEnrollmentKey, createOrg, createPartner, createSite, createUser, type TestUser,
} from '../../test/support/factory.js';
import { as, bearer, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import {
  CREDENTIALS, EXPECTATIONS, expectedFor, isPublic, TENANT_FILTERS, pathValue, REACH_FIELDS,
  type Credential, type Expectation, type Outcome, type SweptExpectation, type Targets,
} from './isolation-expectations.js';

type Json = Record<string, unknown>;
type Schema = Json & { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; anyOf?: Schema[]; enum?: unknown[] };
interface Operation { parameters?: { in: string; name: string; required?: boolean }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }
interface OpenApi { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } }

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Tenant A: one of everything, plus the strings that must never reach tenant B. */
interface Victim extends Omit<Targets, 'attacker'> {
  orgIds: string[];
  siteIds: string[];
  apiKeyIds: string[];
  users: TestUser[];
  /** id, e-mail, name, hostname … → what it is, for the failure message. */
  markers: Map<string, string>;
}

interface Attacker {
  sessions: Record<Exclude<Credential, 'api-key' | 'agent'>, Session>;
  apiKey: { id: string; key: string };
  device: { id: string; agentId: string; authToken: string };
  enrollmentKey: string;
  partnerUserId: string;
  actorIds: string[];
}

const ROLES = ['admin', 'technician', 'readonly'] as const;

async function buildAttacker(t: TestApp): Promise<Attacker> {
  const partner = await createPartner(t.db);
  const org = await createOrg(t.db, partner.id);
  const site = await createSite(t.db, org.id);
  const sessions = {} as Attacker['sessions'];
  const actorIds: string[] = [];
  let partnerUserId = '';
  for (const role of ROLES) {
    for (const [name, user] of [
      [`partner-${role}`, await createUser(t.db, { scope: 'partner', partnerId: partner.id, role })],
      [`org-${role}`, await createUser(t.db, { scope: 'organization', orgId: org.id, role })],
    ] as const) {
      sessions[name as keyof Attacker['sessions']] = await loginWithMfa(t.app, user, t.clock);
      actorIds.push(user.id);
      if (name === 'partner-readonly') partnerUserId = user.id;
    }
  }
  const apiKey = await createApiKey(t.db, org.id, { scopes: ['*'], rateLimit: 100_000 });
  const device = await createDevice(t.db, org.id, { siteId: site.id });
  const enrollment = await createEnrollmentKey(t.db, org.id, { pepper: t.config.enrollmentKeyPepper, maxUsage: 100 });
  return { sessions, apiKey, device, enrollmentKey: enrollment.key, partnerUserId, actorIds: [...actorIds, apiKey.id, device.id] };
}

async function buildVictim(t: TestApp, system: Session): Promise<Victim> {
  const partner = await createPartner(t.db);
  const orgs = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
  const sites = [await createSite(t.db, orgs[0]!.id), await createSite(t.db, orgs[1]!.id)];
  const partnerAdmin = await createUser(t.db, { scope: 'partner', partnerId: partner.id });
  const orgAdmin = await createUser(t.db, { scope: 'organization', orgId: orgs[0]!.id });
  const orgReadonly = await createUser(t.db, { scope: 'organization', orgId: orgs[0]!.id, role: 'readonly' });
  const admin = as(t.app, await loginWithMfa(t.app, partnerAdmin, t.clock));
  const orgAdminSession = await login(t.app, orgAdmin); // a user.login in the organization's chain (security-events report)
  const call = async (request: InjectOptions, status = 200) => {
    const res = await admin(request);
    assert.equal(res.statusCode, status, `${request.method} ${request.url}: ${res.body}`);
    return res.json() as Json;
  };
  // Changes of A's own, so that its audit chain, reports and retention policy hold something of A's.
  await call({ method: 'PATCH', url: `/api/v1/users/${orgReadonly.id}`, payload: { name: 'Renamed by own admin' } });
  const org = await call({ method: 'PATCH', url: `/api/v1/orgs/organizations/${orgs[0]!.id}`, payload: { name: `Victim ${orgs[0]!.id.slice(0, 8)}` } });
  await call({ method: 'PUT', url: `/api/v1/audit-logs/retention?orgId=${orgs[0]!.id}`, payload: { retentionDays: 400 } });
  const keys = [await createApiKey(t.db, orgs[0]!.id, { scopes: ['*'] }), await createApiKey(t.db, orgs[1]!.id, { scopes: ['devices:read'] })];
  const enrollmentKey = await createEnrollmentKey(t.db, orgs[0]!.id, { pepper: t.config.enrollmentKeyPepper, siteId: sites[0]!.id });
  const device = await createDevice(t.db, orgs[0]!.id, { siteId: sites[0]!.id, hostname: `victim-host-${orgs[0]!.id.slice(0, 8)}` });
  const destination = await call({
    method: 'POST', url: '/api/v1/event-destinations', payload: { orgId: orgs[0]!.id, name: 'Victim SIEM', kind: 'syslog', url: 'syslog+tcp://victim-siem.example:6514', enabled: false },
  }, 201);
  const invitation = await call({
    method: 'POST', url: '/api/v1/users/invitations', payload: { email: `invitee-${orgs[0]!.id.slice(0, 8)}@example.test`, name: 'Victim invitee', scope: 'organization', role: 'readonly', orgId: orgs[0]!.id },
  }, 201);
  const agent = (method: 'POST' | 'PUT', path: string, payload: Json) =>
    t.app.inject({ method, url: `/api/v1/agents/${device.agentId}/${path}`, headers: { authorization: `Bearer ${device.authToken}` }, payload });
  const timestamp = new Date(t.clock.now()).toISOString();
  assert.equal((await agent('POST', 'logs', { logs: [{ timestamp, level: 'info', component: 'heartbeat', message: 'victim log' }] })).statusCode, 201);
  const events = await agent('PUT', 'eventlogs', { events: [{ timestamp, level: 'info', category: 'system', source: 'victim', message: 'victim event' }] });
  assert.ok(events.statusCode < 300, events.body);
  await sealed(t, system, orgs.map((o) => o.id));
  const entries = (await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=${orgs[0]!.id}&limit=100` })).json().data as { id: string }[];
  assert.ok(entries.length > 0, 'tenant A has audit entries');

  const users = [partnerAdmin, orgAdmin, orgReadonly];
  const markers = new Map<string, string>([
    [partner.id, 'partner id'], [partner.slug, 'partner slug'], [String(org.name), 'organization name'], [device.agentId, 'agent id'], [`victim-host-${orgs[0]!.id.slice(0, 8)}`, 'device hostname'],
  ]);
  const label = (ids: string[], what: string) => ids.forEach((id, i) => markers.set(id, `${what} ${i}`));
  label(orgs.map((o) => o.id), 'organization id');
  label(sites.map((s) => s.id), 'site id');
  label(users.map((u) => u.id), 'user id');
  label(users.map((u) => u.email), 'user e-mail');
  label(keys.map((k) => k.id), 'API key id');
  label([enrollmentKey.id], 'enrollment key id');
  label([String(destination.id)], 'event destination id');
  label([device.id], 'device id');
  const sessionId = ((await as(t.app, orgAdminSession)({ method: 'GET', url: '/api/v1/auth/sessions' })).json().data as { id: string; current: boolean }[]).find((x) => x.current)!.id;
  label([sessionId], 'session id');
  label([String(invitation.id)], 'invitation id');
  markers.set(String(invitation.email), 'invitee e-mail');
  label(entries.map((e) => e.id), 'audit entry id');
  return {
    partnerId: partner.id,
    orgId: orgs[0]!.id,
    otherOrgId: orgs[1]!.id,
    orgIds: orgs.map((o) => o.id),
    siteId: sites[0]!.id,
    siteIds: sites.map((s) => s.id),
    userId: orgAdmin.id,
    userIds: users.map((u) => u.id),
    users,
    apiKeyId: keys[0]!.id,
    apiKeyIds: keys.map((k) => k.id),
    enrollmentKeyId: enrollmentKey.id,
    eventDestinationId: String(destination.id),
    deviceId: device.id,
    agentId: device.agentId,
    auditEntryId: entries[0]!.id,
    sessionId,
    invitationId: String(invitation.id),
    markers,
  };
}

/** Waits until the sealer has chained every pending row of the organizations (API.md §8: within a second). */
async function sealed(t: TestApp, system: Session, orgIds: string[]): Promise<void> {
  for (const orgId of orgIds) {
    for (let attempt = 0; ; attempt++) {
      const res = await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/verify?orgId=${orgId}` });
      assert.equal(res.statusCode, 200, res.body);
      if (res.json().pending === 0) break;
      assert.ok(attempt < 100, `rows of ${orgId} still pending after 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Every "METHOD /path" of the document. */
function documentedOperations(doc: OpenApi): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).filter((m) => HTTP_METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${path}`));
}

let probeCounter = 0;

/**
 * A minimal valid value for a request schema: the required properties, the ones naming a tenant,
 * and when nothing is required the first plain property (so a PATCH is not refused as empty).
 */
function sample(doc: OpenApi, schema: Schema, name: string, a: Targets): unknown {
  const ref = schema.$ref as string | undefined;
  if (ref) return sample(doc, doc.components!.schemas![ref.replace('#/components/schemas/', '')]!, name, a);
  if (schema.anyOf) return sample(doc, schema.anyOf.find((s) => s.type !== 'null')!, name, a);
  if (Array.isArray(schema.type)) return sample(doc, { ...schema, type: schema.type.find((t) => t !== 'null') }, name, a);
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const properties = schema.properties ?? {};
      const names = new Set([...(schema.required ?? []), ...Object.keys(properties).filter((p) => p in REACH_FIELDS)]);
      if (names.size === 0) {
        const plain = Object.keys(properties).find((p) => ['string', 'integer', 'number', 'boolean'].includes(String(properties[p]!.type)));
        if (plain) names.add(plain);
      }
      return Object.fromEntries([...names].map((p) => [p, sample(doc, properties[p]!, p, a)]));
    }
    case 'array': {
      if (/org/i.test(name) && (schema.items as Schema | undefined)?.format === 'uuid') return [a.orgId, a.otherOrgId];
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => sample(doc, schema.items!, name, a));
    }
    case 'string': {
      if (schema.format === 'uuid') {
        if (!REACH_FIELDS[name]) throw new Error(`no tenant-A value for body field ${name}: add a body to its expectation`);
        return REACH_FIELDS[name](a);
      }
      const n = ++probeCounter;
      if (schema.format === 'email') return `isolation-probe-${n}@example.test`;
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      const value = `isolation-probe-${n}`.slice(0, Number(schema.maxLength ?? 255));
      if (schema.pattern && !new RegExp(String(schema.pattern)).test(value)) throw new Error(`cannot derive ${name} (pattern ${schema.pattern}): add a body to its expectation`);
      return value;
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      throw new Error(`cannot derive a value for ${name} (${JSON.stringify(schema).slice(0, 100)}): add a body to its expectation`);
  }
}

/** The request of an operation aimed at tenant A; without `tenantFilters`, a collection's own default view. */
function requestFor(doc: OpenApi, key: string, e: SweptExpectation, a: Targets, tenantFilters = true): InjectOptions & { url: string } {
  const [method, path] = key.split(' ') as [InjectOptions['method'], string];
  const op = doc.paths[path]?.[method!.toLowerCase()];
  const query = new URLSearchParams();
  for (const param of op?.parameters ?? []) {
    if (param.in !== 'query') continue;
    const value = e.query?.[param.name] ?? TENANT_FILTERS[param.name]?.(a) ?? (param.name === 'limit' ? '100' : undefined);
    if (value === undefined) {
      if (param.required) throw new Error(`${key}: no value for required query parameter ${param.name}`);
      continue;
    }
    if (tenantFilters || !TENANT_FILTERS[param.name]) query.set(param.name, value);
  }
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => pathValue(path, name, a)) + (query.toString() ? `?${query}` : '');
  const schema = op?.requestBody?.content?.['application/json']?.schema;
  const payload = e.body ? e.body(a) : schema ? sample(doc, schema, 'body', a) : undefined;
  return { method, url, ...(payload === undefined ? {} : { payload: payload as Json }) };
}

/**
 * The answer's body without what B itself asked: an export is audited with its filters (A's orgId
 * among them, when B named it), in a chain B then reads. Nothing else of B's own entries is spared.
 */
function withoutEchoedFilters(body: string, actorIds: readonly string[]): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  const strip = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(strip);
    const entry = node as Json & { user?: { id?: string }; details?: unknown };
    const actor = (entry.actorId ?? entry.user?.id) as string | undefined;
    if (entry.action === 'data.export' && actor && actorIds.includes(actor)) {
      if (typeof entry.details === 'string') entry.details = JSON.stringify({ ...(JSON.parse(entry.details) as Json), filters: null });
      else if (entry.details && typeof entry.details === 'object') (entry.details as Json).filters = null;
    }
    Object.values(entry).forEach(strip);
  };
  strip(parsed);
  return JSON.stringify(parsed);
}

/** What is wrong with an answer, or null. A 2xx answer must name nothing of tenant A. */
function judge(res: { statusCode: number; body: string }, expected: Outcome, markers: Map<string, string>, actorIds: readonly string[] = []): string | null {
  const got = () => `${res.statusCode} ${res.body.slice(0, 400)}`;
  if (res.statusCode !== expected.status) return `expected ${expected.status} ${expected.code ?? ''}, got ${got()}`;
  if (expected.code) {
    let code: unknown;
    try {
      code = (JSON.parse(res.body) as Json).code;
    } catch {
      code = undefined;
    }
    if (code !== expected.code) return `expected code ${expected.code}, got ${got()}`;
  }
  if (res.statusCode < 300) {
    const body = withoutEchoedFilters(res.body, actorIds);
    const leaked = [...markers].filter(([marker]) => body.includes(marker)).map(([, what]) => what);
    if (leaked.length) return `answered with tenant A's ${leaked.join(', ')}: ${res.body.slice(0, 400)}`;
  }
  return null;
}

// Reads first and deletes last, so one leaking write cannot hide what the later checks would see.
const METHOD_ORDER: Record<string, number> = { GET: 0, POST: 1, PUT: 1, PATCH: 1, DELETE: 2 };
const SWEEP = Object.entries(EXPECTATIONS).sort(([x], [y]) => METHOD_ORDER[x.split(' ')[0]!]! - METHOD_ORDER[y.split(' ')[0]!]!);

for (const backend of backends()) {
  describe(`tenant isolation on ${backend}: tenant B against every operation, aimed at tenant A`, () => {
    let database: Awaited<ReturnType<typeof privateTestDatabase>>;
    let t: TestApp;
    let doc: OpenApi;
    let system: Session;
    let a: Victim;
    let b: Attacker;
    let targets: Targets;
    let ownerView: Map<string, { statusCode: number; body: string }>;
    let snapshot: Map<string, string>;
    let requests = 0;

    /** URLs whose answers to a system admin make up tenant A's state: nothing in them may change. */
    const stateUrls = () => [
      `/api/v1/orgs/partners/${a.partnerId}`,
      `/api/v1/orgs/organizations?partnerId=${a.partnerId}&limit=100`,
      ...a.orgIds.flatMap((id) => [
        `/api/v1/orgs/organizations/${id}`, `/api/v1/orgs/sites?orgId=${id}&limit=100`, `/api/v1/api-keys?orgId=${id}&limit=100`,
        `/api/v1/enrollment-keys?orgId=${id}&limit=100`, `/api/v1/devices?orgId=${id}&limit=100`, `/api/v1/audit-logs/retention?orgId=${id}`,
        `/api/v1/audit-logs/logs?orgId=${id}&limit=100`, `/api/v1/audit-logs/verify?orgId=${id}`, `/api/v1/audit-logs/checkpoints?orgId=${id}&limit=100`,
      ]),
      ...a.siteIds.map((id) => `/api/v1/orgs/sites/${id}`),
      ...a.userIds.map((id) => `/api/v1/users/${id}`),
      `/api/v1/users?partnerId=${a.partnerId}&limit=100`,
      ...a.apiKeyIds.map((id) => `/api/v1/api-keys/${id}`),
      `/api/v1/enrollment-keys/${a.enrollmentKeyId}`,
      `/api/v1/event-destinations/${a.eventDestinationId}`,
      `/api/v1/event-destinations?orgId=${a.orgId}&limit=100`,
      `/api/v1/devices/${a.deviceId}`,
      `/api/v1/devices/${a.deviceId}/diagnostic-logs?limit=100`,
      `/api/v1/devices/${a.deviceId}/eventlogs?limit=100`,
    ];
    const readState = async () => {
      await sealed(t, system, a.orgIds);
      const state = new Map<string, string>();
      for (const url of stateUrls()) {
        const res = await as(t.app, system)({ method: 'GET', url });
        state.set(url, `${res.statusCode} ${res.body}`);
      }
      return state;
    };

    before(async () => {
      database = await privateTestDatabase(backend);
      // A checkpoint at every sealed batch, so tenant A has checkpoints that B must not see.
      // Metrics on, so that the probes of GET /metrics meet its token check, not "metrics are off".
      t = await testApp({ db: database.db, env: { AUDIT_CHECKPOINT_EVERY_ROWS: '1', METRICS_TOKEN: 'metrics-token-for-the-isolation-sweep-0123' } });
      const docRes = await t.app.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(docRes.statusCode, 200);
      doc = docRes.json() as OpenApi;
      system = await login(t.app, await createUser(t.db, { scope: 'system' }));
      a = await buildVictim(t, system);
      b = await buildAttacker(t);
      targets = { ...a, attacker: { enrollmentKey: b.enrollmentKey, partnerUserId: b.partnerUserId, deviceId: b.device.id } };
      // The owner's side first (these reads audit into A's chain), then the state B must leave alone.
      ownerView = new Map();
      for (const [key, e] of SWEEP) {
        if (isPublic(e) || e.self || e.via === 'agent' || !key.startsWith('GET ') || !doc.paths[key.slice(4)]) continue;
        ownerView.set(key, await as(t.app, system)(requestFor(doc, key, e, targets)));
      }
      snapshot = await readState();
      for (const [url, answer] of snapshot) assert.ok(answer.startsWith('200 '), `${url}: ${answer}`);
    });
    after(async () => {
      await t?.close();
      await database?.drop();
    });

    it('has an expectation for every operation of the OpenAPI document, and none for an operation it lacks', () => {
      const documented = documentedOperations(doc);
      const entry = (key: string): Expectation | undefined => EXPECTATIONS[key];
      assert.deepEqual(
        {
          withoutExpectation: documented.filter((key) => !entry(key)),
          noLongerInTheDocument: Object.keys(EXPECTATIONS).filter((key) => !documented.includes(key)),
        },
        { withoutExpectation: [], noLongerInTheDocument: [] },
      );
    });

    it('aims at real targets: tenant A’s owner side reaches each one, and sees A’s data through each collection', () => {
      const failures: string[] = [];
      for (const [key, res] of ownerView) {
        const e = EXPECTATIONS[key] as SweptExpectation;
        if ([401, 403, 404].includes(res.statusCode)) failures.push(`${key}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        else if (e.collection && ![...a.markers.keys()].some((m) => res.body.includes(m))) failures.push(`${key}: nothing of A's in ${res.body.slice(0, 300)}`);
      }
      assert.deepEqual(failures, []);
    });

    const headersFor = (c: Credential): Record<string, string> =>
      c === 'api-key' ? { 'x-api-key': b.apiKey.key } : c === 'agent' ? { authorization: `Bearer ${b.device.authToken}` } : bearer(b.sessions[c]);

    for (const [key, e] of SWEEP) {
      if (isPublic(e) && !e.probes) continue;
      it(isPublic(e) ? `${key} (public; probed with the credential in its body)` : key, async (ctx) => {
        const failures: string[] = [];
        const [method, path] = key.split(' ') as [InjectOptions['method'], string];
        if (!isPublic(e) && !doc.paths[path]?.[method!.toLowerCase()]) {
          ctx.skip('not in the OpenAPI document: see the expectation-coverage test');
          return;
        }
        for (const probe of e.probes?.(targets) ?? []) {
          requests++;
          const headers = probe.credential ? headersFor(probe.credential) : {};
          const res = await t.app.inject({ method, url: probe.url ?? path, headers, payload: probe.payload });
          const problem = judge(res, probe.expect, a.markers, b.actorIds);
          if (problem) failures.push(`${probe.credential ?? 'no credential'}, ${probe.name}: ${problem}`);
        }
        if (isPublic(e)) {
          assert.deepEqual(failures, []);
          return;
        }
        for (const c of CREDENTIALS) {
          const expected = expectedFor(e, c);
          const variants = [requestFor(doc, key, e, targets)];
          const unfiltered = requestFor(doc, key, e, targets, false);
          if (e.collection && expected.status < 300 && unfiltered.url !== variants[0]!.url) variants.push(unfiltered);
          for (const request of variants) {
            requests++;
            const res = await t.app.inject({ ...request, headers: headersFor(c) });
            const problem = judge(res, expected, a.markers, b.actorIds);
            if (problem) failures.push(`${c} ${request.method} ${request.url}: ${problem}`);
          }
        }
        assert.deepEqual(failures, []);
      });
    }

    it('left everything of tenant A as it was, with nothing by B’s actors in A’s audit chains', async (ctx) => {
      ctx.diagnostic(`${requests} requests of tenant B`);
      const now = await readState();
      const changed = [...snapshot].filter(([url, body]) => now.get(url) !== body).map(([url, body]) => `${url}\n  before: ${body.slice(0, 300)}\n  after:  ${now.get(url)!.slice(0, 300)}`);
      assert.deepEqual(changed, []);
      const body = (url: string) => JSON.parse(now.get(url)!.slice(4)) as Json;
      for (const orgId of a.orgIds) {
        const verify = body(`/api/v1/audit-logs/verify?orgId=${orgId}`);
        assert.equal(verify.valid, true, JSON.stringify(verify));
        const entries = body(`/api/v1/audit-logs/logs?orgId=${orgId}&limit=100`).data as { actorId: string | null; action: string }[];
        assert.deepEqual(entries.filter((x) => x.actorId && b.actorIds.includes(x.actorId)), []);
      }
    });
  });
}
