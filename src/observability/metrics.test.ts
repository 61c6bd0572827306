// GET /metrics through HTTP: off (404) until METRICS_TOKEN is set, then only for that bearer; the
// Prometheus text format with the series an operator needs after real requests (route templates,
// a failed sign-in, an API key's 429, live-query outcomes, agent sockets, transactions, the pool),
// on PostgreSQL and PGlite; the audit queue's gauges with rows held pending on PostgreSQL; and no
// tenant identifier in any label but the bounded audit chain label.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { asOwner, backends, privateTestDatabase, testApp, testConfig, testRedisUrl, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, bearer, login, type Session } from '../../test/support/clients.js';
import { ConfigError } from '../config.js';

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';

export interface Line {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The exposition's samples (comment lines left out); label values here never hold quotes. */
export function parseExposition(text: string): Line[] {
  return text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
    assert.ok(match, `not a sample line: ${l}`);
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    return { name: match[1]!, labels, value: Number(match[3]) };
  });
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when there is none. */
function valueOf(lines: Line[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = lines.filter((l) => l.name === name && Object.entries(labels).every(([k, v]) => l.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

async function scrape(t: TestApp): Promise<Line[]> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(res.body);
}

/** A minimal agent answering every command with one event log. */
function connectAgent(host: string, device: { agentId: string; authToken: string }): Promise<WebSocket> {
  const socket = new WebSocket(`ws://${host}/api/v1/agents/${device.agentId}/ws`, { headers: { authorization: `Bearer ${device.authToken}` } });
  socket.on('message', (data) => {
    const command = JSON.parse(String(data)) as { id: string };
    const result = { logs: [{ name: 'System', displayName: 'System', recordCount: 1, maxSize: 1024, retentionDays: 30, lastWriteTime: '2026-11-01T00:00:00.000Z' }] };
    socket.send(JSON.stringify({ type: 'command_result', id: command.id, status: 'completed', result }));
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('METRICS_TOKEN', () => {
  it('is a secret: at least 32 characters', () => {
    assert.throws(() => testConfig({ METRICS_TOKEN: 'short' }), (err: Error) => err instanceof ConfigError && /METRICS_TOKEN must be at least 32/.test(err.message));
    assert.equal(testConfig({ METRICS_TOKEN: TOKEN }).metricsToken, TOKEN);
    assert.equal(testConfig().metricsToken, null);
  });
});

describe('GET /metrics while METRICS_TOKEN is unset', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ backend: 'pglite' });
  });
  after(() => t?.close());

  it('answers 404 saying metrics are off, whatever is sent', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }]) {
      const body = assertProblem(await t.app.inject({ method: 'GET', url: '/metrics', headers }), 404, 'NOT_FOUND');
      assert.match(String(body.detail), /METRICS_TOKEN/);
    }
  });
});

for (const backend of backends()) {
  describe(`GET /metrics on ${backend}`, () => {
    let t: TestApp;
    let host: string;
    let org: TestOrg;
    let user: Session;
    let email: string;
    let key: { id: string; key: string };
    before(async () => {
      t = await testApp({ backend, env: { METRICS_TOKEN: TOKEN, LIVE_QUERY_TIMEOUT_MS: '2000' } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      org = await createOrg(t.db, (await createPartner(t.db)).id);
      const created = await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'admin' });
      email = created.email;
      user = await login(t.app, created);
      key = await createApiKey(t.db, org.id, { rateLimit: 1 });
    });
    after(() => t?.close());

    it('refuses any other credential: none, a wrong token, a user’s session, an API key (401 problem)', async () => {
      for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: 'Bearer' }, bearer(user), { 'x-api-key': key.key }]) {
        const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
        assertProblem(res, 401, 'UNAUTHENTICATED');
        assert.match(String(res.headers['www-authenticate']), /^Bearer/);
      }
    });

    it('shows requests by route template, sign-in failures, API-key 429s, live queries, sockets and the database', async () => {
      const device = await createDevice(t.db, org.id);
      assert.equal((await as(t.app, user)({ method: 'GET', url: `/api/v1/devices/${device.id}` })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: '/no/such/route' })).statusCode, 404);
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'not the password' } }), 401, 'UNAUTHENTICATED');
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/auth/api-key', headers: { 'x-api-key': key.key } })).statusCode, 200);
      assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/auth/api-key', headers: { 'x-api-key': key.key } }), 429, 'RATE_LIMITED');
      const live = `/api/v1/devices/${device.id}/live/eventlogs`;
      assertProblem(await as(t.app, user)({ method: 'GET', url: live }), 409, 'DEVICE_OFFLINE');
      const socket = await connectAgent(host, device);
      try {
        assert.equal((await as(t.app, user)({ method: 'GET', url: live })).statusCode, 200);
        const lines = await scrape(t);
        assert.equal(valueOf(lines, 'dms_http_requests_total', { method: 'GET', route: '/api/v1/devices/:id', status: '200' }), 1);
        assert.equal(valueOf(lines, 'dms_http_request_duration_seconds_count', { method: 'GET', route: '/api/v1/devices/:id', status: '200' }), 1);
        assert.equal(valueOf(lines, 'dms_http_request_duration_seconds_bucket', { route: '/api/v1/devices/:id', le: '+Inf' }), 1);
        assert.equal(valueOf(lines, 'dms_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
        assert.equal(valueOf(lines, 'dms_http_requests_total', { method: 'GET', route: '/api/v1/auth/api-key', status: '429' }), 1);
        assert.equal(valueOf(lines, 'dms_login_failures_total', { reason: 'invalid_credentials' }), 1);
        assert.equal(valueOf(lines, 'dms_login_throttled_total', { by: 'account' }), 0);
        assert.equal(valueOf(lines, 'dms_api_key_rate_limited_total'), 1);
        assert.equal(valueOf(lines, 'dms_live_queries_total', { outcome: 'device_offline' }), 1);
        assert.equal(valueOf(lines, 'dms_live_queries_total', { outcome: 'ok' }), 1);
        assert.equal(valueOf(lines, 'dms_live_query_duration_seconds_count', { outcome: 'ok' }), 1);
        assert.equal(valueOf(lines, 'dms_agent_sockets'), 1);
        assert.ok(valueOf(lines, 'dms_db_transactions_total', { login: 'app', outcome: 'committed' })! > 0);
        assert.ok(valueOf(lines, 'dms_db_transaction_duration_seconds_count', { login: 'app' })! > 0);
        assert.ok(valueOf(lines, 'dms_db_waiting_transactions')! >= 0, 'shown on both backends (the workers may be queued at this moment)');
        if (backend === 'postgres') {
          assert.equal(valueOf(lines, 'dms_db_pool_max_connections'), 10);
          assert.ok(valueOf(lines, 'dms_db_pool_connections', { state: 'idle' })! >= 1);
          assert.ok(valueOf(lines, 'dms_db_pool_connections', { state: 'in_use' })! >= 0);
        } else {
          assert.equal(valueOf(lines, 'dms_db_pool_max_connections'), undefined, 'PGlite has no pool');
        }
        for (const name of ['dms_audit_pending_rows', 'dms_audit_pending_chains', 'dms_audit_seal_lag_seconds', 'dms_event_delivery_backlog_entries', 'dms_event_delivery_lag_seconds']) {
          assert.ok(valueOf(lines, name)! >= 0, `${name} is shown`);
        }
        assert.equal(valueOf(lines, 'dms_event_deliveries_total', { outcome: 'delivered' }), 0);
        assert.ok(valueOf(lines, 'process_cpu_user_seconds_total')! > 0, 'process metrics are collected');
        assert.ok(lines.some((l) => l.name === 'nodejs_eventloop_lag_seconds'));
        if (process.platform === 'linux') assert.ok(valueOf(lines, 'process_open_fds')! > 0, 'open descriptors, counted without blocking');
      } finally {
        socket.close();
      }
    });

    it('is documented with a security scheme of its own', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.deepEqual(doc.paths['/metrics'].get.security, [{ metricsToken: [] }]);
      assert.equal(doc.components.securitySchemes.metricsToken.scheme, 'bearer');
    });

    it('counts a retention pass of one chain', async () => {
      await t.app.auditRetention.runOnce({ orgId: org.id });
      assert.equal(valueOf(await scrape(t), 'dms_audit_retention_runs_total', { outcome: 'completed' }), 1);
    });

    it('puts no tenant identifier, e-mail or key in a label, but the audit chain’s', async () => {
      const text = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
      const labelled = text.split('\n').filter((l) => !l.startsWith('#') && !l.startsWith('dms_audit_chain_')).join('\n');
      for (const secret of [org.id, org.partnerId, email, key.id, key.key, user.accessToken, TOKEN]) assert.ok(!labelled.includes(secret), `${secret} appears in the exposition`);
    });
  });
}

describe('the audit queue in /metrics, rows held pending (PostgreSQL)', { skip: process.env.TEST_DATABASE_URL ? false : 'needs PostgreSQL: a chain is held by a second connection' }, () => {
  let database: Awaited<ReturnType<typeof privateTestDatabase>>;
  let t: TestApp;
  before(async () => {
    // A database of its own: the queue gauges count every chain, and the checkpoint pass signs every chain.
    database = await privateTestDatabase('postgres');
    t = await testApp({ db: database.db, env: { METRICS_TOKEN: TOKEN } });
  });
  after(async () => {
    await t?.close();
    await database?.drop();
  });

  it('shows entries waiting, the chain waiting longest by its organization, and the checkpoints signed once sealed', async () => {
    const org = await createOrg(t.db, (await createPartner(t.db)).id);
    const admin = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'admin' }));
    const offline = async () => assertProblem(await as(t.app, admin)({ method: 'GET', url: `/api/v1/devices/${(await createDevice(t.db, org.id)).id}/live/eventlogs` }), 409, 'DEVICE_OFFLINE');
    await offline(); // the chain's first entry, so that its head row exists to be held
    await t.app.auditSealer.sealNow();
    const lines = await asOwner(t.db, async (tx) => {
      // The sealer skips a chain whose head another transaction holds: its entries stay pending.
      await tx.query('select 1 from audit_chains where chain_id = $1 for update', [org.id]);
      for (let i = 0; i < 3; i++) await offline();
      t.clock.advance(90_000);
      return scrape(t);
    });
    assert.equal(valueOf(lines, 'dms_audit_pending_rows'), 3);
    assert.equal(valueOf(lines, 'dms_audit_pending_chains'), 1);
    assert.equal(valueOf(lines, 'dms_audit_chain_pending_rows', { chain: org.id }), 3);
    const lag = valueOf(lines, 'dms_audit_chain_seal_lag_seconds', { chain: org.id })!;
    assert.ok(lag >= 90 && lag < 120, `seal lag ${lag}`);
    assert.equal(valueOf(lines, 'dms_audit_seal_lag_seconds'), lag);

    await t.app.auditSealer.sealNow();
    await t.app.auditCheckpoints.checkpointNow();
    assert.ok(valueOf(await scrape(t), 'dms_audit_checkpoints_signed_total', { kind: 'periodic' })! >= 1);
  });
});

describe('relayed live queries in /metrics (Redis)', async () => {
  const redisUrl = await testRedisUrl();
  it('counts the query forwarded by the instance asked and served by the one holding the socket', { skip: redisUrl ? false : 'Redis is not reachable' }, async () => {
    const env = { REDIS_URL: redisUrl!, METRICS_TOKEN: TOKEN };
    const a = await testApp({ env });
    const b = await testApp({ env, db: a.db });
    try {
      await b.app.listen({ port: 0, host: '127.0.0.1' });
      const org = await createOrg(a.db, (await createPartner(a.db)).id);
      const user = await login(a.app, await createUser(a.db, { scope: 'organization', orgId: org.id }));
      const device = await createDevice(a.db, org.id);
      const socket = await connectAgent(`127.0.0.1:${(b.app.server.address() as AddressInfo).port}`, device);
      try {
        await new Promise((resolve) => setTimeout(resolve, 100)); // presence recorded
        assert.equal((await as(a.app, user)({ method: 'GET', url: `/api/v1/devices/${device.id}/live/eventlogs` })).statusCode, 200);
        const [onA, onB] = [await scrape(a), await scrape(b)];
        assert.equal(valueOf(onA, 'dms_relay_calls_total', { direction: 'forwarded', outcome: 'ok' }), 1);
        assert.equal(valueOf(onA, 'dms_live_queries_total', { outcome: 'ok' }), 1);
        assert.equal(valueOf(onA, 'dms_agent_sockets'), 0);
        assert.equal(valueOf(onB, 'dms_relay_calls_total', { direction: 'served', outcome: 'ok' }), 1);
        assert.equal(valueOf(onB, 'dms_agent_sockets'), 1);
      } finally {
        socket.close();
      }
    } finally {
      await b.close();
      await a.close();
    }
  });
});
