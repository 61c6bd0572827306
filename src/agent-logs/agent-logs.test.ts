// Agent diagnostic logs and device event logs through HTTP: submission (all or nothing, limits,
// agent authentication before validation), event dedupe with exact counts, the audit entry, and
// the device queries with every filter, tenancy, API-key scopes and pagination clamping.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { NIL_UUID } from '../db/columns.js';

type Device = Awaited<ReturnType<typeof createDevice>>;
type Json = Record<string, unknown>;

const BASE = Date.parse('2025-03-01T12:00:00.000Z');
const at = (seconds: number) => new Date(BASE + seconds * 1000).toISOString();
const log = (over: Json = {}): Json => ({ timestamp: at(0), level: 'info', component: 'heartbeat', message: 'ok', ...over });
const event = (over: Json = {}): Json => ({ timestamp: at(0), level: 'info', category: 'system', source: 'svc', message: 'm', ...over });

for (const backend of backends()) {
  describe(`agent logs on ${backend}`, () => {
    let t: TestApp;
    let orgA: TestOrg;
    let orgB: TestOrg;
    const s: Record<string, Session> = {};
    const call = (who: string) => as(t.app, s[who]!);
    const agentCall = (method: 'POST' | 'PUT', path: string) => (dev: Device, payload: unknown, token = dev.authToken, agentId = dev.agentId) =>
      t.app.inject({
        method,
        url: `/api/v1/agents/${agentId}/${path}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'agent/1.0' },
        payload: payload as Json | string,
      });
    const submit = agentCall('POST', 'logs');
    const submitEvents = agentCall('PUT', 'eventlogs');
    const stored = async (table: 'diagnostic_logs' | 'device_event_logs', deviceId: string) =>
      (await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query<{ n: number }>(`select count(*)::int as n from ${table} where device_id = $1`, [deviceId]))).rows[0]!.n;
    const diag = async (dev: Device, query = '', who = 'adminA') => {
      const res = await call(who)({ method: 'GET', url: `/api/v1/devices/${dev.id}/diagnostic-logs${query}` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { data: Json[]; pagination: Json };
    };
    const events = async (dev: Device, query = '') => {
      const res = await call('adminA')({ method: 'GET', url: `/api/v1/devices/${dev.id}/eventlogs${query}` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { data: Json[]; pagination: Json };
    };

    before(async () => {
      t = await testApp({ backend });
      const partner = await createPartner(t.db);
      orgA = await createOrg(t.db, partner.id);
      orgB = await createOrg(t.db, partner.id);
      const foreign = await createOrg(t.db, (await createPartner(t.db)).id);
      const users = {
        adminA: await createUser(t.db, { scope: 'organization', orgId: orgA.id }),
        readonlyA: await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' }),
        adminB: await createUser(t.db, { scope: 'organization', orgId: orgB.id }),
        partner: await createUser(t.db, { scope: 'partner', partnerId: partner.id }),
        foreignPartner: await createUser(t.db, { scope: 'partner', partnerId: foreign.partnerId }),
        system: await createUser(t.db, { scope: 'system' }),
      };
      for (const [k, user] of Object.entries(users)) s[k] = await login(t.app, user);
    });
    after(() => t.close());

    it('stores diagnostic logs and lists them newest first with every filter', async () => {
      const dev = await createDevice(t.db, orgA.id);
      const logs = [
        log({ timestamp: at(0), level: 'debug', component: 'updater', message: 'Download started', fields: { url: 'https://x/y', size: 3 }, agentVersion: '1.2.3' }),
        log({ timestamp: at(1), level: 'info', component: 'heartbeat', message: 'Heartbeat OK, 100% healthy' }),
        log({ timestamp: '2025-03-01T13:00:02.5+01:00', level: 'warn', component: 'ws', message: 'Reconnect_attempt 3 in C:\\temp', fields: null }),
        log({ timestamp: at(3), level: 'error', component: 'updater', message: 'UPDATE FAILED: disk full' }),
        log({ timestamp: at(3), level: 'info', component: 'ws', message: 'under_score' }),
      ];
      const res = await submit(dev, { logs });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(res.json(), { received: 5 });

      const all = await diag(dev);
      assert.deepEqual(all.pagination, { page: 1, limit: 50, total: 5, totalPages: 1 });
      const first = all.data.find((e) => e.component === 'updater' && e.level === 'debug')!;
      assert.deepEqual({ ...first, id: undefined, createdAt: undefined }, {
        id: undefined, createdAt: undefined, deviceId: dev.id, orgId: orgA.id, timestamp: at(0), level: 'debug', component: 'updater',
        message: 'Download started', fields: { url: 'https://x/y', size: 3 }, agentVersion: '1.2.3',
      });
      assert.equal(all.data.find((e) => e.component === 'heartbeat')!.fields, null);
      for (const e of all.data) assert.match(e.id as string, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'UUIDv7');
      assert.equal(all.data.find((e) => e.level === 'warn')!.timestamp, '2025-03-01T12:00:02.500Z', 'stored in UTC');
      // Newest first; equal timestamps by id descending, the same on every read.
      const order = all.data.map((e) => `${e.timestamp as string} ${e.id as string}`);
      assert.deepEqual(order, [...order].sort().reverse());
      assert.equal(new Set(all.data.map((e) => e.timestamp)).size, 4, 'two entries share a timestamp');
      assert.deepEqual((await diag(dev)).data.map((e) => e.id), all.data.map((e) => e.id));

      const messages = async (query: string) => (await diag(dev, query)).data.map((e) => e.message);
      assert.deepEqual(await messages('?level=error'), ['UPDATE FAILED: disk full']);
      assert.deepEqual(await messages('?level=debug,%20warn'), ['Reconnect_attempt 3 in C:\\temp', 'Download started']);
      assert.deepEqual(await messages('?component=updater'), ['UPDATE FAILED: disk full', 'Download started']);
      assert.deepEqual(await messages('?component=Updater'), [], 'component is exact');
      assert.equal((await messages(`?since=${encodeURIComponent(at(2.5))}`)).length, 3);
      assert.deepEqual(await messages(`?until=${encodeURIComponent(at(1))}`), ['Heartbeat OK, 100% healthy', 'Download started']);
      assert.deepEqual(await messages(`?since=${at(1)}&until=${at(2.5)}&level=info,warn`), ['Reconnect_attempt 3 in C:\\temp', 'Heartbeat OK, 100% healthy']);
      assert.deepEqual(await messages('?search=heartbeat%20ok'), ['Heartbeat OK, 100% healthy'], 'case-insensitive');
      assert.deepEqual(await messages('?search=%25'), ['Heartbeat OK, 100% healthy'], '% is literal');
      assert.deepEqual(await messages('?search=_'), ['under_score', 'Reconnect_attempt 3 in C:\\temp'], '_ is literal');
      assert.deepEqual(await messages('?search=%5C'), ['Reconnect_attempt 3 in C:\\temp'], '\\ is literal');
      assert.deepEqual(await messages('?search=disk%20full&component=updater&level=error'), ['UPDATE FAILED: disk full']);
      assert.deepEqual(await messages('?search=nowhere'), []);

      const page2 = await diag(dev, '?limit=2&page=2');
      assert.deepEqual(page2.pagination, { page: 2, limit: 2, total: 5, totalPages: 3 });
      assert.deepEqual(page2.data.map((e) => e.id), all.data.slice(2, 4).map((e) => e.id));
      assert.deepEqual((await diag(dev, '?skipCount=true')).pagination, { page: 1, limit: 50, total: null, totalPages: null });
    });

    it('refuses bad submissions with 400 and stores nothing', async () => {
      const dev = await createDevice(t.db, orgA.id);
      const nested = (depth: number) => {
        let v: Json = { leaf: 1 };
        for (let i = 1; i < depth; i++) v = { a: v };
        return v;
      };
      const many = (n: number) => Array.from({ length: n }, (_, i) => log({ message: `m${i}` }));
      const bad: unknown[] = [
        { logs: many(501) }, {}, { logs: 'x' }, { logs: many(1), extra: 1 },
        { logs: [log({ level: 'fatal' })] }, { logs: [log({ level: 'INFO' })] },
        { logs: [log({ timestamp: 'yesterday' })] }, { logs: [log({ timestamp: '2025-02-30T00:00:00Z' })] },
        { logs: [log({ timestamp: '2025-03-01T00:00:00' })] }, { logs: [log({ timestamp: '2025-03-01 00:00:00Z' })] },
        { logs: [log({ timestamp: 1740830400000 })] },
        ...['timestamp', 'level', 'component', 'message'].map((f) => ({ logs: [{ ...log(), [f]: undefined }] })),
        { logs: [log({ component: '' })] }, { logs: [log({ component: 'c'.repeat(101) })] },
        { logs: [log({ message: 'm'.repeat(10_001) })] }, { logs: [log({ agentVersion: 'v'.repeat(51) })] },
        { logs: [log({ fields: [1, 2] })] }, { logs: [log({ fields: 'k=v' })] }, { logs: [log({ unknown: 1 })] },
        { logs: [log({ fields: nested(9) })] }, { logs: [log({ fields: { blob: 'x'.repeat(20_000) } })] },
        { logs: [log({ fields: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])) })] },
        // All or nothing: 499 good entries, then one the service refuses (year 0000 in UTC).
        { logs: [...many(499), log({ timestamp: '0001-01-01T00:30:00+01:00' })] },
        { logs: [...many(499), log({ fields: nested(9) })] },
      ];
      for (const payload of bad) {
        const problem = assertProblem(await submit(dev, payload), 400, 'VALIDATION_FAILED');
        assert.ok(Array.isArray(problem.errors), JSON.stringify(payload).slice(0, 200));
      }
      // Nesting that would overflow a recursive walk is still a 400.
      const deep = `{"logs":[{"timestamp":"${at(0)}","level":"info","component":"c","message":"m","fields":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}]}`;
      assertProblem(await submit(dev, deep), 400, 'VALIDATION_FAILED');
      assertProblem(await submit(dev, '{"logs": ['), 400, 'VALIDATION_FAILED');
      assert.equal(await stored('diagnostic_logs', dev.id), 0);
      // An empty batch stores nothing and says so, as an empty event-log batch does.
      const empty = await submit(dev, { logs: [] });
      assert.deepEqual([empty.statusCode, empty.json()], [201, { received: 0 }]);

      // The edges that are allowed, and text PostgreSQL cannot hold as such (NUL) kept as U+FFFD.
      const ok = await submit(dev, { logs: [log({ fields: nested(8), message: 'm'.repeat(10_000), component: 'c'.repeat(100) }), log({ message: 'a\u0000b', fields: { 'k\u0000': 'v\u0000' } }), ...many(498)] });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.deepEqual(ok.json(), { received: 500 });
      const nul = (await diag(dev, '?search=a%EF%BF%BDb')).data[0]!;
      assert.deepEqual([nul.message, nul.fields], ['a\uFFFDb', { 'k\uFFFD': 'v\uFFFD' }]);
    });

    it('takes agent bodies up to 5 MiB and refuses larger ones with 413', async () => {
      const dev = await createDevice(t.db, orgA.id);
      const big = await submit(dev, { logs: Array.from({ length: 400 }, (_, i) => log({ message: `${i} ${'x'.repeat(9_000)}` })) });
      assert.equal(big.statusCode, 201, 'a 3.6 MB body is accepted');
      const huge = JSON.stringify({ logs: Array.from({ length: 500 }, () => log({ message: 'y'.repeat(10_000) })), pad: 'z'.repeat(600_000) });
      assert.ok(huge.length > 5 * 1024 * 1024);
      assertProblem(await submit(dev, huge), 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(await stored('diagnostic_logs', dev.id), 400);
    });

    it('authenticates the agent before anything else: 404 unknown agent, 401 wrong token', async () => {
      const dev = await createDevice(t.db, orgA.id);
      const other = await createDevice(t.db, orgA.id);
      const unknown = randomBytes(32).toString('hex');
      for (const send of [submit, submitEvents]) {
        assertProblem(await send(dev, { logs: [log()] }, dev.authToken, unknown), 404, 'NOT_FOUND');
        assertProblem(await send(dev, { bad: true }, dev.authToken, 'not-an-agent-id'), 404, 'NOT_FOUND');
        assertProblem(await send(dev, { bad: true }, 'wrong-token'), 401, 'UNAUTHENTICATED');
        assertProblem(await send(dev, { bad: true }, other.authToken), 401, 'UNAUTHENTICATED');
        assertProblem(await send(dev, { bad: true }, ''), 401, 'UNAUTHENTICATED');
        // Even an oversized body from a stranger is refused for who they are, not for its size.
        assertProblem(await send(dev, 'x'.repeat(6 * 1024 * 1024), 'wrong-token'), 401, 'UNAUTHENTICATED');
      }
      // A decommissioned device's token stops working.
      assert.equal((await call('adminA')({ method: 'DELETE', url: `/api/v1/devices/${other.id}` })).statusCode, 200);
      assertProblem(await submit(other, { logs: [log()] }), 401, 'UNAUTHENTICATED');
      assert.equal(await stored('diagnostic_logs', dev.id) + (await stored('device_event_logs', dev.id)), 0);
    });

    it('stores event logs, skips duplicates within and across requests, and counts exactly', async () => {
      const dev = await createDevice(t.db, orgA.id, { hostname: 'ws-042' });
      const batch = [
        event({ timestamp: at(0), level: 'info', category: 'system', source: 'Service Control Manager', eventId: '7036', message: 'Spooler running', details: { service: 'Spooler' } }),
        event({ timestamp: at(1), level: 'warning', category: 'security', source: 'Security-Auditing', eventId: '4625', message: 'An account failed to log on' }),
        event({ timestamp: at(2), level: 'error', category: 'application', source: 'Application Error', eventId: '1000', message: 'app.exe crashed' }),
        event({ timestamp: at(3), level: 'critical', category: 'hardware', source: 'disk', message: 'bad block' }),
        event({ timestamp: at(4), source: 'Service Control Manager', eventId: '7036', message: 'duplicate in the same request' }),
      ];
      const first = await submitEvents(dev, { events: batch });
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(first.json(), { success: true, count: 4 });
      // Again: the three with eventIds are duplicates; the one without is never one.
      assert.deepEqual((await submitEvents(dev, { events: batch })).json(), { success: true, count: 1 });
      assert.deepEqual((await submitEvents(dev, { events: [event({ eventId: '7036', source: 'Other source' }), event({ eventId: '' }), event({ eventId: '' }), event({ eventId: null })] })).json(), { success: true, count: 4 });
      const elsewhere = await createDevice(t.db, orgA.id);
      assert.deepEqual((await submitEvents(elsewhere, { events: batch })).json(), { success: true, count: 4 }, 'dedupe is per device');
      assert.deepEqual((await submitEvents(dev, { events: [] })).json(), { success: true, count: 0 });
      assert.equal(await stored('device_event_logs', dev.id), 9);

      const list = await events(dev);
      assert.deepEqual(list.pagination, { page: 1, limit: 50, total: 9, totalPages: 1 });
      const kept = list.data.find((e) => e.eventId === '7036' && e.source === 'Service Control Manager')!;
      assert.deepEqual({ ...kept, id: undefined, createdAt: undefined }, {
        id: undefined, createdAt: undefined, deviceId: dev.id, orgId: orgA.id, timestamp: at(0), level: 'info', category: 'system',
        source: 'Service Control Manager', eventId: '7036', message: 'Spooler running', details: { service: 'Spooler' },
      }, 'the first of the duplicates is kept');
      const ids = async (query: string) => (await events(dev, query)).data.map((e) => `${e.source}/${e.eventId}`);
      assert.deepEqual(await ids('?category=security'), ['Security-Auditing/4625']);
      assert.deepEqual(await ids('?level=critical'), ['disk/null', 'disk/null']);
      assert.deepEqual(await ids('?source=Application%20Error'), ['Application Error/1000']);
      assert.deepEqual(await ids('?source=application%20error'), [], 'source is exact');
      assert.deepEqual(await ids(`?startDate=${at(1)}&endDate=${at(2)}`), ['Application Error/1000', 'Security-Auditing/4625']);
      assert.deepEqual(await ids(`?category=system&startDate=${at(0)}&endDate=${at(0)}&source=Service%20Control%20Manager`), ['Service Control Manager/7036']);

      // Audited in the device's organization chain, in the same transaction as the insert.
      const audit = (await call('adminA')({ method: 'GET', url: '/api/v1/audit-logs/logs?action=agent.eventlogs.submit&limit=100' })).json().data as Json[];
      const mine = audit.filter((e) => e.resourceId === dev.id);
      assert.equal(mine.length, 3, 'one entry per non-empty submission');
      const details = mine.map((e) => e.details as Json).sort((a, b) => (b.submitted as number) - (a.submitted as number) || (b.inserted as number) - (a.inserted as number));
      assert.deepEqual(details, [
        { submitted: 5, inserted: 4, duplicates: 1, rawActorId: dev.agentId },
        { submitted: 5, inserted: 1, duplicates: 4, rawActorId: dev.agentId },
        { submitted: 4, inserted: 4, duplicates: 0, rawActorId: dev.agentId },
      ]);
      const entry = mine[0]!;
      assert.deepEqual(
        { orgId: entry.orgId, actorType: entry.actorType, actorId: entry.actorId, resourceType: entry.resourceType, resourceName: entry.resourceName, userAgent: entry.userAgent, result: entry.result },
        { orgId: orgA.id, actorType: 'agent', actorId: NIL_UUID, resourceType: 'device', resourceName: 'ws-042', userAgent: 'agent/1.0', result: 'success' },
      );
    });

    it('dedupes concurrent overlapping submissions of one device exactly', async () => {
      const dev = await createDevice(t.db, orgA.id);
      const requests = Array.from({ length: 6 }, (_, r) => {
        const ids = Array.from({ length: 300 }, (_, i) => (i * 7 + r * 53) % 400).sort(() => Math.random() - 0.5);
        return ids.map((id) => event({ source: `src-${id % 3}`, eventId: String(id), message: `request ${r}` }));
      });
      const distinct = new Set(requests.flat().map((e) => `${e.source}/${e.eventId}`)).size;
      const results = await Promise.all(requests.map((evs) => submitEvents(dev, { events: evs })));
      for (const res of results) assert.equal(res.statusCode, 200, res.body);
      assert.equal(results.reduce((sum, res) => sum + (res.json().count as number), 0), distinct);
      assert.equal(await stored('device_event_logs', dev.id), distinct);
    });

    it('refuses bad event submissions with 400 and stores nothing', async () => {
      const dev = await createDevice(t.db, orgA.id);
      const bad: unknown[] = [
        { events: Array.from({ length: 1001 }, (_, i) => event({ eventId: String(i) })) }, { events: 'x' }, {},
        { events: [event({ level: 'warn' })] }, { events: [event({ category: 'network' })] }, { events: [event({ timestamp: 'now' })] },
        ...['timestamp', 'level', 'category', 'source', 'message'].map((f) => ({ events: [{ ...event(), [f]: undefined }] })),
        { events: [event({ source: '' })] }, { events: [event({ source: 's'.repeat(256) })] }, { events: [event({ eventId: 7036 })] },
        { events: [event({ eventId: 'e'.repeat(101) })] }, { events: [event({ details: [] })] }, { events: [event({ message: 'm'.repeat(10_001) })] },
        { events: [...Array.from({ length: 999 }, (_, i) => event({ eventId: String(i) })), event({ details: { a: { b: { c: { d: { e: { f: { g: { h: {} } } } } } } } } })] },
      ];
      for (const payload of bad) assertProblem(await submitEvents(dev, payload), 400, 'VALIDATION_FAILED');
      assert.equal(await stored('device_event_logs', dev.id), 0);
      const full = await submitEvents(dev, { events: Array.from({ length: 1000 }, (_, i) => event({ eventId: String(i) })) });
      assert.deepEqual(full.json(), { success: true, count: 1000 });
    });

    it('shows a device’s logs only to callers who reach it, with devices:read', async () => {
      const dev = await createDevice(t.db, orgA.id);
      await submit(dev, { logs: [log()] });
      await submitEvents(dev, { events: [event()] });
      const read = async (headers: Record<string, string>, path: string) => t.app.inject({ method: 'GET', url: `/api/v1/devices/${dev.id}/${path}`, headers });
      const keyRead = await createApiKey(t.db, orgA.id, { scopes: ['devices:read'] });
      const keyAudit = await createApiKey(t.db, orgA.id, { scopes: ['audit:read'] });
      const keyB = await createApiKey(t.db, orgB.id, { scopes: ['*'] });
      for (const path of ['diagnostic-logs', 'eventlogs']) {
        for (const who of ['adminA', 'readonlyA', 'partner', 'system']) assert.equal((await call(who)({ method: 'GET', url: `/api/v1/devices/${dev.id}/${path}` })).json().pagination.total, 1, who);
        assert.equal((await read({ 'x-api-key': keyRead.key }, path)).json().data.length, 1);
        for (const who of ['adminB', 'foreignPartner']) assertProblem(await call(who)({ method: 'GET', url: `/api/v1/devices/${dev.id}/${path}` }), 404, 'NOT_FOUND');
        assertProblem(await read({ 'x-api-key': keyB.key }, path), 404, 'NOT_FOUND');
        assertProblem(await read({ 'x-api-key': keyAudit.key }, path), 403, 'API_KEY_SCOPE_DENIED');
        assertProblem(await read({}, path), 401, 'UNAUTHENTICATED');
        assertProblem(await call('adminA')({ method: 'GET', url: `/api/v1/devices/${randomUUID()}/${path}` }), 404, 'NOT_FOUND');
        assertProblem(await call('adminA')({ method: 'GET', url: `/api/v1/devices/not-a-uuid/${path}` }), 400, 'VALIDATION_FAILED');
      }
      // Row-level security is the backstop: another organization's scope sees none of it and cannot write into it.
      const scopeB = { scope: 'organization', partnerId: orgB.partnerId, orgIds: [orgB.id] } as const;
      for (const table of ['diagnostic_logs', 'device_event_logs']) {
        const seen = await withTenant(t.db, scopeB, (tx) => tx.query<{ n: number }>(`select count(*)::int as n from ${table} where device_id = $1`, [dev.id]));
        assert.equal(seen.rows[0]!.n, 0);
      }
      await assert.rejects(withTenant(t.db, scopeB, (tx) =>
        tx.query(`insert into diagnostic_logs (device_id, org_id, timestamp, level, component, message) values ($1, $2, now(), 'info', 'c', 'm')`, [dev.id, orgA.id])), /row-level security/);
    });

    it('clamps pagination and refuses unknown filter values', async () => {
      const dev = await createDevice(t.db, orgA.id);
      const get = (path: string) => call('adminA')({ method: 'GET', url: `/api/v1/devices/${dev.id}/${path}` });
      const pagination = async (path: string) => (await get(path)).json().pagination;
      assert.deepEqual(await pagination('diagnostic-logs?limit=5000&page=0'), { page: 1, limit: 1000, total: 0, totalPages: 0 });
      assert.deepEqual(await pagination('diagnostic-logs?limit=0&page=-3'), { page: 1, limit: 1, total: 0, totalPages: 0 });
      assert.deepEqual(await pagination('eventlogs?limit=999'), { page: 1, limit: 500, total: 0, totalPages: 0 });
      assert.deepEqual(await pagination('eventlogs?limit=&page='), { page: 1, limit: 50, total: 0, totalPages: 0 });
      for (const path of [
        'diagnostic-logs?level=verbose', 'diagnostic-logs?level=info,bogus', 'diagnostic-logs?level=info,,warn', 'diagnostic-logs?since=yesterday',
        'diagnostic-logs?until=2025-13-01T00:00:00Z', 'diagnostic-logs?limit=abc', 'diagnostic-logs?page=1.5', `diagnostic-logs?search=${'s'.repeat(201)}`,
        'eventlogs?category=network', 'eventlogs?level=warn', 'eventlogs?startDate=today', 'eventlogs?endDate=0000-01-01T00:00:00Z', 'eventlogs?skipCount=maybe',
      ]) assertProblem(await get(path), 400, 'VALIDATION_FAILED');
    });
  });
}

