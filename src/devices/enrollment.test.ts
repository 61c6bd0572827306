// Enrollment keys, enrollment, heartbeats and devices through HTTP: keys shown once and hashed
// with the pepper, org inference and reach, exact usage under concurrency, placement and caps, the
// agent token (404 then 401), offline after three missed heartbeats, source-IP audit, and devices
// through JWT and API keys, decommissioned tokens refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createOrg, createPartner, createSite, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';

const NOBODY = '00000000-0000-4000-8000-000000000000';
const AGENT = { hostname: 'ws-01', osType: 'windows', osVersion: '11', architecture: 'x86_64', agentVersion: '2.1.0' };

describe('enrollment and devices', () => {
  let t: TestApp;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let foreign: TestOrg;
  const s: Record<string, Session> = {};
  const call = (who: string) => as(t.app, s[who]!);
  const createKey = (who: string, payload: Record<string, unknown>) => call(who)({ method: 'POST', url: '/api/v1/enrollment-keys', payload });
  const enroll = (payload: Record<string, unknown>, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url: '/api/v1/agents/enroll', payload: { ...AGENT, ...payload }, headers });
  const heartbeat = (agentId: string, token: string, headers: Record<string, string> = {}, payload: unknown = {}) =>
    t.app.inject({ method: 'POST', url: `/api/v1/agents/${agentId}/heartbeat`, headers: { authorization: `Bearer ${token}`, ...headers }, payload: payload as Record<string, unknown> });

  before(async () => {
    t = await testApp();
    const partner = await createPartner(t.db);
    orgA = await createOrg(t.db, partner.id);
    orgB = await createOrg(t.db, partner.id);
    foreign = await createOrg(t.db, (await createPartner(t.db)).id);
    const users = {
      system: await createUser(t.db, { scope: 'system' }),
      partner: await createUser(t.db, { scope: 'partner', partnerId: partner.id }),
      orgAdminA: await createUser(t.db, { scope: 'organization', orgId: orgA.id }),
    };
    for (const [k, user] of Object.entries(users)) s[k] = await loginWithMfa(t.app, user, t.clock);
    s.techA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'technician' }));
    s.readonlyB = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgB.id, role: 'readonly' }));
  });
  after(() => t.close());

  it('creates enrollment keys: 64 hex shown once, org inferred for organization scope, required otherwise', async () => {
    const res = await createKey('orgAdminA', { name: 'laptops' });
    assert.equal(res.statusCode, 201, res.body);
    const key = res.json();
    assert.match(key.key, /^[0-9a-f]{64}$/);
    assert.deepEqual([key.orgId, key.siteId, key.usageCount, key.maxUsage, key.status], [orgA.id, null, 0, 1, 'active']);
    const ttl = Date.parse(key.expiresAt) - t.clock.now();
    assert.ok(ttl > 59 * 60_000 && ttl <= 60 * 60_000 + 1000, 'default TTL is 60 minutes');
    const got = await call('orgAdminA')({ method: 'GET', url: `/api/v1/enrollment-keys/${key.id}` });
    assert.equal(got.statusCode, 200);
    assert.equal('key' in got.json(), false);
    const list = await call('orgAdminA')({ method: 'GET', url: '/api/v1/enrollment-keys?limit=100' });
    assert.equal(list.body.includes(key.key), false);
    const stored = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query<{ key_hash: string }>(`select key_hash from enrollment_keys where id = $1`, [key.id]));
    assert.notEqual(stored.rows[0]!.key_hash, key.key);

    assertProblem(await createKey('orgAdminA', { name: 'x', orgId: orgB.id }), 403, 'ORG_ACCESS_DENIED');
    assert.equal((await createKey('orgAdminA', { name: 'x', orgId: orgA.id })).statusCode, 201);
    assertProblem(await createKey('partner', { name: 'x' }), 400, 'VALIDATION_FAILED');
    assertProblem(await createKey('system', { name: 'x' }), 400, 'VALIDATION_FAILED');
    assertProblem(await createKey('partner', { name: 'x', orgId: foreign.id }), 403, 'ORG_ACCESS_DENIED');
    assertProblem(await createKey('system', { name: 'x', orgId: NOBODY }), 404, 'NOT_FOUND');
    const siteOfB = await createSite(t.db, orgB.id);
    assertProblem(await createKey('partner', { name: 'x', orgId: orgA.id, siteId: siteOfB.id }), 400, 'VALIDATION_FAILED');
    for (const payload of [{ name: '' }, { name: 'x', maxUsage: 0 }, { name: 'x', maxUsage: 100001 }, { name: 'x', expiresAt: '2001-01-01T00:00:00Z' }, { name: 'x', expiresAt: 'soon' }, { name: 'x', extra: 1 }]) {
      assertProblem(await createKey('orgAdminA', payload), 400, 'VALIDATION_FAILED');
    }
    assertProblem(await createKey('techA', { name: 'x' }), 403, 'PERMISSION_DENIED');
    assert.equal((await call('techA')({ method: 'GET', url: `/api/v1/enrollment-keys/${key.id}` })).statusCode, 200);
    assertProblem(await call('readonlyB')({ method: 'GET', url: `/api/v1/enrollment-keys/${key.id}` }), 404, 'NOT_FOUND');
  });

  it('rotates (usage reset, maxUsage null = unlimited, old key dead) and deletes, with audit entries', async () => {
    const key = (await createKey('orgAdminA', { name: 'rotating', maxUsage: 2 })).json();
    assert.equal((await enroll({ enrollmentKey: key.key })).statusCode, 201);
    const rotated = await call('orgAdminA')({ method: 'POST', url: `/api/v1/enrollment-keys/${key.id}/rotate`, payload: { maxUsage: null } });
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.deepEqual([rotated.json().usageCount, rotated.json().maxUsage, rotated.json().expiresAt], [0, null, key.expiresAt]);
    assert.notEqual(rotated.json().key, key.key);
    assertProblem(await enroll({ enrollmentKey: key.key }), 401, 'ENROLLMENT_KEY_INVALID');
    for (let i = 0; i < 3; i++) assert.equal((await enroll({ enrollmentKey: rotated.json().key })).statusCode, 201);
    const plain = await call('orgAdminA')({ method: 'POST', url: `/api/v1/enrollment-keys/${key.id}/rotate` });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(plain.json().maxUsage, null, 'omitted values are kept');
    const removed = await call('orgAdminA')({ method: 'DELETE', url: `/api/v1/enrollment-keys/${key.id}` });
    assert.deepEqual(removed.json(), { success: true });
    assertProblem(await call('orgAdminA')({ method: 'GET', url: `/api/v1/enrollment-keys/${key.id}` }), 404, 'NOT_FOUND');
    assertProblem(await enroll({ enrollmentKey: plain.json().key }), 401, 'ENROLLMENT_KEY_INVALID');
    await t.app.auditSealer.sealNow();
    const actions = (await call('orgAdminA')({ method: 'GET', url: '/api/v1/audit-logs/logs?action=enrollment_key&limit=100' })).json().data
      .filter((e: { resourceId: string }) => e.resourceId === key.id).map((e: { action: string }) => e.action).reverse();
    assert.deepEqual(actions, ['enrollment_key.create', 'enrollment_key.rotate', 'enrollment_key.rotate', 'enrollment_key.delete']);
  });

  it('enrolls: the device in the key’s site, else the given site, else the oldest, else a new Default site', async () => {
    // Created through the API, so the partner's cached reach includes it at once.
    const made = await call('partner')({ method: 'POST', url: '/api/v1/orgs/organizations', payload: { name: 'Placement', slug: `placement-${Date.now()}` } });
    assert.equal(made.statusCode, 201, made.body);
    const org = made.json() as { id: string };
    const key = async (payload: Record<string, unknown> = {}) => (await createKey('partner', { name: 'k', orgId: org.id, maxUsage: 10, ...payload })).json();
    const first = await enroll({ enrollmentKey: (await key()).key });
    assert.equal(first.statusCode, 201, first.body);
    const enrolled = first.json();
    assert.match(enrolled.agentId, /^[0-9a-f]{64}$/);
    assert.equal(enrolled.orgId, org.id);
    const site = (await call('partner')({ method: 'GET', url: `/api/v1/orgs/sites/${enrolled.siteId}` })).json();
    assert.equal(site.name, 'Default');
    const second = (await enroll({ enrollmentKey: (await key()).key })).json();
    assert.equal(second.siteId, enrolled.siteId, 'the oldest site, not another Default');
    const chosen = await createSite(t.db, org.id);
    const keyForSite = await key({ siteId: chosen.id });
    assert.equal((await enroll({ enrollmentKey: keyForSite.key })).json().siteId, chosen.id);
    const other = await createSite(t.db, org.id);
    assertProblem(await enroll({ enrollmentKey: keyForSite.key, siteId: other.id }), 403, 'ENROLLMENT_KEY_ORG_MISMATCH');
    const free = await key();
    assert.equal((await enroll({ enrollmentKey: free.key, siteId: other.id })).json().siteId, other.id);
    assertProblem(await enroll({ enrollmentKey: free.key, siteId: (await createSite(t.db, orgB.id)).id }), 403, 'ENROLLMENT_KEY_ORG_MISMATCH');
    assertProblem(await enroll({ enrollmentKey: free.key, orgId: orgB.id }), 403, 'ENROLLMENT_KEY_ORG_MISMATCH');
    assert.equal((await enroll({ enrollmentKey: free.key, orgId: org.id })).statusCode, 201);
    const device = (await call('partner')({ method: 'GET', url: `/api/v1/devices/${enrolled.deviceId}` })).json();
    assert.deepEqual([device.agentId, device.hostname, device.osType, device.status, device.orgId], [enrolled.agentId, 'ws-01', 'windows', 'offline', org.id]);
  });

  it('refuses bad, expired and used-up keys, and admits exactly maxUsage enrollments under concurrency', async () => {
    assertProblem(await enroll({ enrollmentKey: 'f'.repeat(64) }), 401, 'ENROLLMENT_KEY_INVALID');
    assertProblem(await enroll({ enrollmentKey: 'not hex' }), 401, 'ENROLLMENT_KEY_INVALID');
    for (const payload of [{ enrollmentKey: 'a'.repeat(64), osType: 'beos' }, { enrollmentKey: 'a'.repeat(64), hostname: '' }, { hostname: 'x' }]) {
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/agents/enroll', payload: { ...AGENT, ...payload, ...('enrollmentKey' in payload ? {} : { osType: 'linux' }) } }), 400, 'VALIDATION_FAILED');
    }
    const short = (await createKey('orgAdminA', { name: 'short', maxUsage: 5, expiresAt: new Date(t.clock.now() + 60_000).toISOString() })).json();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => enroll({ enrollmentKey: short.key, hostname: `h${i}` })));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 5);
    for (const r of results.filter((r) => r.statusCode !== 201)) assertProblem(r, 401, 'ENROLLMENT_KEY_EXHAUSTED');
    assert.equal((await call('orgAdminA')({ method: 'GET', url: `/api/v1/enrollment-keys/${short.id}` })).json().status, 'exhausted');
    const expiring = (await createKey('orgAdminA', { name: 'expiring', expiresAt: new Date(t.clock.now() + 60_000).toISOString() })).json();
    t.clock.advance(61_000);
    assertProblem(await enroll({ enrollmentKey: expiring.key }), 401, 'ENROLLMENT_KEY_EXPIRED');
    const expired = (await call('orgAdminA')({ method: 'GET', url: '/api/v1/enrollment-keys?expired=true&limit=100' })).json().data;
    assert.ok(expired.some((k: { id: string; status: string }) => k.id === expiring.id && k.status === 'expired'));
    assert.ok(!(await call('orgAdminA')({ method: 'GET', url: '/api/v1/enrollment-keys?expired=false&limit=100' })).json().data.some((k: { id: string }) => k.id === expiring.id));
  });

  it('enforces organization and partner device caps under concurrency', async () => {
    const partner = await createPartner(t.db);
    const org = await createOrg(t.db, partner.id);
    await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`update organizations set max_devices = 3 where id = $1`, [org.id]));
    const admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
    const key = (await as(t.app, admin)({ method: 'POST', url: '/api/v1/enrollment-keys', payload: { name: 'k', maxUsage: 100 } })).json();
    const results = await Promise.all(Array.from({ length: 10 }, () => enroll({ enrollmentKey: key.key })));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 3);
    for (const r of results.filter((r) => r.statusCode !== 201)) assertProblem(r, 409, 'LIMIT_REACHED');
  });

  it('refuses enrollment keys made under another pepper as unknown, not with a 500', async () => {
    const key = (await createKey('orgAdminA', { name: 'peppered' })).json();
    const other = await testApp({ db: t.db, env: { ENROLLMENT_KEY_PEPPER: 'a-different-pepper-entirely-0123456789' } });
    try {
      assertProblem(await other.app.inject({ method: 'POST', url: '/api/v1/agents/enroll', payload: { ...AGENT, enrollmentKey: key.key } }), 401, 'ENROLLMENT_KEY_INVALID');
    } finally {
      await other.close();
    }
    assert.equal((await enroll({ enrollmentKey: key.key })).statusCode, 201);
  });

  it('authenticates agents (unknown id 404, then wrong token 401) and tracks heartbeats', async () => {
    const device = await createDevice(t.db, orgA.id);
    assertProblem(await heartbeat('b'.repeat(64), device.authToken), 404, 'NOT_FOUND');
    assertProblem(await heartbeat('not-an-agent', device.authToken), 404, 'NOT_FOUND');
    assertProblem(await heartbeat(device.agentId, 'wrong'), 401, 'UNAUTHENTICATED');
    assertProblem(await t.app.inject({ method: 'POST', url: `/api/v1/agents/${device.agentId}/heartbeat`, payload: {} }), 401, 'UNAUTHENTICATED');
    const other = await createDevice(t.db, orgA.id);
    assertProblem(await heartbeat(device.agentId, other.authToken), 401, 'UNAUTHENTICATED');
    const ok = await heartbeat(device.agentId, device.authToken, {}, { agentVersion: '2.2.0', metrics: { cpu: 12 } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().ok, true);
    const bodiless = await t.app.inject({ method: 'POST', url: `/api/v1/agents/${device.agentId}/heartbeat`, headers: { authorization: `Bearer ${device.authToken}` } });
    assert.equal(bodiless.statusCode, 200, bodiless.body);
    assertProblem(await heartbeat(device.agentId, device.authToken, {}, { agentVersion: 7 }), 400, 'VALIDATION_FAILED');
    const seen = (await call('orgAdminA')({ method: 'GET', url: `/api/v1/devices/${device.id}` })).json();
    assert.deepEqual([seen.status, seen.agentVersion], ['online', '2.2.0']);
    assert.equal((await call('orgAdminA')({ method: 'GET', url: `/api/v1/devices?status=online&limit=100` })).json().data.some((d: { id: string }) => d.id === device.id), true);
    t.clock.advance(181_000);
    assert.equal((await call('orgAdminA')({ method: 'GET', url: `/api/v1/devices/${device.id}` })).json().status, 'offline', 'offline after three missed 60 s heartbeats');
    assert.equal((await call('orgAdminA')({ method: 'GET', url: `/api/v1/devices?status=offline&limit=100` })).json().data.some((d: { id: string }) => d.id === device.id), true);
  });

  it('audits a changed source IP, ignoring proxy headers unless TRUST_PROXY_HEADERS is set', async () => {
    const device = await createDevice(t.db, orgA.id);
    await heartbeat(device.agentId, device.authToken);
    await heartbeat(device.agentId, device.authToken, { 'x-forwarded-for': '203.0.113.9' });
    const trusting = await testApp({ db: t.db, env: { TRUST_PROXY_HEADERS: 'true' } });
    try {
      const res = await trusting.app.inject({ method: 'POST', url: `/api/v1/agents/${device.agentId}/heartbeat`, headers: { authorization: `Bearer ${device.authToken}`, 'x-forwarded-for': '203.0.113.9' }, payload: {} });
      assert.equal(res.statusCode, 200);
    } finally {
      await trusting.close();
    }
    const entries = (await call('orgAdminA')({ method: 'GET', url: '/api/v1/audit-logs/logs?action=agent.source.ip.changed&limit=100' })).json().data
      .filter((e: { resourceId: string }) => e.resourceId === device.id);
    assert.equal(entries.length, 1, 'the spoofed header alone changed nothing');
    assert.deepEqual([entries[0].actorType, entries[0].details.newIp, entries[0].details.rawActorId], ['agent', '203.0.113.9', device.agentId]);
    assert.equal((await call('orgAdminA')({ method: 'GET', url: `/api/v1/devices/${device.id}` })).json().lastSourceIp, '203.0.113.9');
  });

  it('leaves a deleted organization’s devices out of every query, its agents and partner cap included', async () => {
    const partner = await createPartner(t.db);
    const [gone, kept] = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
    const hostname = `gone-${Date.now()}`;
    const device = await createDevice(t.db, gone.id, { hostname });
    const keptDevice = await createDevice(t.db, kept.id);
    const system = call('system');
    const page = async (query: string) => (await system({ method: 'GET', url: `/api/v1/devices?${query}` })).json();
    assert.equal((await page(`orgId=${gone.id}`)).pagination.total, 1);
    assert.equal((await system({ method: 'DELETE', url: `/api/v1/orgs/organizations/${gone.id}` })).statusCode, 200);

    // SPEC: a deleted organization is excluded from every query, system scope's included.
    for (const query of [`orgId=${gone.id}`, `search=${hostname}`, `orgId=${gone.id}&status=offline`]) {
      const listed = await page(query);
      assert.deepEqual([listed.data, listed.pagination.total], [[], 0], query);
    }
    assertProblem(await system({ method: 'GET', url: `/api/v1/devices/${device.id}` }), 404, 'NOT_FOUND');
    assertProblem(await system({ method: 'GET', url: `/api/v1/devices/${device.id}/diagnostic-logs` }), 404, 'NOT_FOUND');
    assertProblem(await system({ method: 'DELETE', url: `/api/v1/devices/${device.id}` }), 404, 'NOT_FOUND');
    assertProblem(await heartbeat(device.agentId, device.authToken), 401, 'UNAUTHENTICATED');
    assert.equal((await system({ method: 'GET', url: `/api/v1/devices/${keptDevice.id}` })).statusCode, 200);
    assert.equal((await heartbeat(keptDevice.agentId, keptDevice.authToken)).statusCode, 200);

    // The partner's cap counts the devices of its live organizations only.
    await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`update partners set max_devices = 2 where id = $1`, [partner.id]));
    const key = (await system({ method: 'POST', url: '/api/v1/enrollment-keys', payload: { name: 'k', orgId: kept.id, maxUsage: 5 } })).json();
    assert.equal((await enroll({ enrollmentKey: key.key })).statusCode, 201);
    assertProblem(await enroll({ enrollmentKey: key.key }), 409, 'LIMIT_REACHED');
  });

  it('leaves a deleted organization’s API keys and enrollment keys out of every query, system scope’s included', async () => {
    const partner = await createPartner(t.db);
    const [gone, kept] = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
    const system = call('system');
    const made = (kind: string, orgId: string) => system({ method: 'POST', url: `/api/v1/${kind}`, payload: { orgId, name: `${kind} of ${orgId}` } });
    const keys = { 'api-keys': { gone: (await made('api-keys', gone.id)).json(), kept: (await made('api-keys', kept.id)).json() },
      'enrollment-keys': { gone: (await made('enrollment-keys', gone.id)).json(), kept: (await made('enrollment-keys', kept.id)).json() } };
    const goneAdmin = as(t.app, await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: gone.id }), t.clock));
    assert.equal((await goneAdmin({ method: 'GET', url: '/api/v1/api-keys' })).statusCode, 200);
    assert.equal((await system({ method: 'DELETE', url: `/api/v1/orgs/organizations/${gone.id}` })).statusCode, 200);

    // SPEC "Errors": key management refuses an organization-scope user without a valid organization.
    for (const kind of ['api-keys', 'enrollment-keys']) {
      for (const [method, suffix, payload] of [['GET', '', undefined], ['POST', '', { name: 'k', orgId: gone.id }], ['GET', `/${keys[kind as 'api-keys'].gone.id}`, undefined]] as const) {
        const refused = assertProblem(await goneAdmin({ method, url: `/api/v1/${kind}${suffix}`, ...(payload ? { payload } : {}) }), 403, 'ACCOUNT_MISCONFIGURED');
        assert.match(String(refused.detail), /organization has been deleted/);
      }
    }

    for (const [kind, { gone: goneKey, kept: keptKey }] of Object.entries(keys)) {
      const verbs = kind === 'api-keys'
        ? [['GET', '', undefined], ['PATCH', '', { name: 'x' }], ['POST', '/rotate', undefined], ['DELETE', '', undefined]] as const
        : [['GET', '', undefined], ['POST', '/rotate', {}], ['DELETE', '', undefined]] as const;
      for (const [method, suffix, payload] of verbs) {
        assertProblem(await system({ method, url: `/api/v1/${kind}/${goneKey.id}${suffix}`, ...(payload ? { payload } : {}) }), 404, 'NOT_FOUND');
      }
      for (const query of ['limit=100', `orgId=${gone.id}`]) {
        const listed = (await system({ method: 'GET', url: `/api/v1/${kind}?${query}` })).json();
        assert.ok(!listed.data.some((k: { id: string }) => k.id === goneKey.id), `${kind}?${query}`);
      }
      assert.equal((await system({ method: 'GET', url: `/api/v1/${kind}?orgId=${gone.id}` })).json().pagination.total, 0);
      assert.equal((await system({ method: 'GET', url: `/api/v1/${kind}/${keptKey.id}` })).statusCode, 200);
    }
    // Neither credential works any more, as before.
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/auth/api-key', headers: { 'x-api-key': keys['api-keys'].gone.key } }), 401, 'API_KEY_INACTIVE');
    assertProblem(await enroll({ enrollmentKey: keys['enrollment-keys'].gone.key }), 401, 'ENROLLMENT_KEY_INVALID');
  });

  it('serves devices to JWT and API-key callers in reach, moves and decommissions them', async () => {
    const device = await createDevice(t.db, orgA.id);
    const readKey = await createApiKey(t.db, orgA.id, { scopes: ['devices:read'] });
    const writeKey = await createApiKey(t.db, orgA.id, { scopes: ['devices:write'] });
    const foreignKey = await createApiKey(t.db, orgB.id, { scopes: ['*'] });
    const withKey = (key: string, method: 'GET' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
      t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
    assert.equal((await withKey(readKey.key, 'GET', `/api/v1/devices/${device.id}`)).json().id, device.id);
    assert.ok((await withKey(readKey.key, 'GET', '/api/v1/devices?limit=100')).json().data.every((d: { orgId: string }) => d.orgId === orgA.id));
    assertProblem(await withKey(foreignKey.key, 'GET', `/api/v1/devices/${device.id}`), 404, 'NOT_FOUND');
    assertProblem(await call('readonlyB')({ method: 'GET', url: `/api/v1/devices/${device.id}` }), 404, 'NOT_FOUND');
    assert.equal((await call('readonlyB')({ method: 'GET', url: `/api/v1/devices?orgId=${orgA.id}` })).json().data.length, 0);
    const target = await createSite(t.db, orgA.id);
    assertProblem(await withKey(readKey.key, 'PATCH', `/api/v1/devices/${device.id}`, { siteId: target.id }), 403, 'API_KEY_SCOPE_DENIED');
    assertProblem(await withKey(writeKey.key, 'PATCH', `/api/v1/devices/${device.id}`, { siteId: (await createSite(t.db, orgB.id)).id }), 400, 'VALIDATION_FAILED');
    // API.md §2: a PATCH with no recognised field is EMPTY_UPDATE, even where the one field is required.
    assertProblem(await withKey(writeKey.key, 'PATCH', `/api/v1/devices/${device.id}`, {}), 400, 'EMPTY_UPDATE');
    assertProblem(await withKey(writeKey.key, 'PATCH', `/api/v1/devices/${device.id}`, { hostname: 'renamed' }), 400, 'EMPTY_UPDATE');
    const moved = await withKey(writeKey.key, 'PATCH', `/api/v1/devices/${device.id}`, { siteId: target.id });
    assert.equal(moved.json().siteId, target.id);
    assertProblem(await call('readonlyB')({ method: 'DELETE', url: `/api/v1/devices/${device.id}` }), 403, 'PERMISSION_DENIED');
    assert.deepEqual((await call('techA')({ method: 'DELETE', url: `/api/v1/devices/${device.id}` })).json(), { success: true });
    assertProblem(await call('techA')({ method: 'GET', url: `/api/v1/devices/${device.id}` }), 404, 'NOT_FOUND');
    assertProblem(await heartbeat(device.agentId, device.authToken), 401, 'UNAUTHENTICATED');
    const actions = (await call('orgAdminA')({ method: 'GET', url: '/api/v1/audit-logs/logs?action=device.&limit=100' })).json().data
      .filter((e: { resourceId: string }) => e.resourceId === device.id).map((e: { action: string; actorType: string }) => `${e.action}/${e.actorType}`);
    assert.deepEqual(actions, ['device.delete/user', 'device.update/api_key']);
  });

  it('keeps device list totals exact under concurrent enrolments and decommissions, per reach and filter', async () => {
    const partner = await createPartner(t.db);
    const [one, two] = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
    const partnerTech = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id, role: 'technician' }));
    const admins = [await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: one.id }), t.clock), await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: two.id }), t.clock)];
    const keys = await Promise.all(admins.map(async (a) => (await as(t.app, a)({ method: 'POST', url: '/api/v1/enrollment-keys', payload: { name: 'k', maxUsage: 100 } })).json().key as string));
    const enrolled = await Promise.all(Array.from({ length: 24 }, (_, i) => enroll({ enrollmentKey: keys[i % 2]!, hostname: `count-${i}` })));
    assert.ok(enrolled.every((r) => r.statusCode === 201));
    const ids = enrolled.map((r) => r.json().deviceId as string);
    // Decommission a third of them (some twice at once: only one may count) while more enrol.
    const doomed = ids.filter((_, i) => i % 3 === 0);
    const racing = await Promise.all([
      ...doomed.flatMap((id) => [call('system')({ method: 'DELETE', url: `/api/v1/devices/${id}` }), call('system')({ method: 'DELETE', url: `/api/v1/devices/${id}` })]),
      ...Array.from({ length: 6 }, (_, i) => enroll({ enrollmentKey: keys[0]!, hostname: `late-${i}` })),
    ]);
    const statuses = racing.map((r) => r.statusCode);
    assert.deepEqual(statuses.slice(-6), [201, 201, 201, 201, 201, 201], racing.slice(-6).map((r) => r.body).join('\n'));
    assert.equal(statuses.filter((c) => c === 200).length, doomed.length, racing.map((r) => r.body).join('\n'));
    const total = async (who: Session, query: string) => (await as(t.app, who)({ method: 'GET', url: `/api/v1/devices?limit=1&${query}` })).json().pagination.total;
    const counted = async (orgIds: string[]) =>
      withTenant(t.db, SYSTEM_SCOPE, async (tx) => (await tx.query<{ n: number }>(`select count(*)::int as n from devices where org_id = any($1::uuid[]) and decommissioned_at is null`, [orgIds])).rows[0]!.n);
    assert.equal(await total(partnerTech, ''), await counted([one.id, two.id]));
    assert.equal(await total(partnerTech, ''), 24 + 6 - doomed.length);
    assert.equal(await total(partnerTech, `orgId=${one.id}`), await counted([one.id]));
    assert.equal(await total(admins[1]!, ''), await counted([two.id]));
    assert.equal(await total(partnerTech, 'status=offline'), await counted([one.id, two.id]));
    assert.equal(await total(partnerTech, 'skipCount=true'), null);
    assert.equal(await total(partnerTech, `orgId=${foreign.id}`), 0);
  });
});
