// The reference agent end to end over HTTP against the real service (WebSocket off, since the
// service's /ws route is not part of this module): enrollment and the 0600 state file, reuse of
// the saved identity, heartbeats, diagnostic log shipping and the final flush, enrollment errors,
// and a revoked identity. Live queries are exercised against a stand-in WebSocket endpoint.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, type TestOrg } from '../../test/support/factory.js';
import { freePort } from '../../test/support/free-port.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { hashEnrollmentKey } from '../enrollment-keys/enrollment-keys.service.js';
import type { CommandResultMessage } from '../live-queries/protocol.js';
import { AGENT_VERSION, AgentStartError, startAgent, type AgentOptions } from './agent.js';
import { createEventLogStore } from './event-log-store.js';
import { generateSampleEventLogs } from './sample-event-log.js';

const SAMPLE_NOW = Date.parse('2025-02-01T00:00:00Z');
const dir = mkdtempSync(path.join(os.tmpdir(), 'dms-agent-test-'));
const statePath = (name: string) => path.join(dir, `${name}.json`);

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('reference agent against the service (HTTP)', () => {
  let t: TestApp;
  let server: string;
  let org: TestOrg;
  const lines: string[] = [];
  const sql = <R extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
    withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query<R>(text, params)).then((r) => r.rows);
  const newKey = async (maxUsage = 1) => {
    const key = randomBytes(32).toString('hex');
    await sql(`insert into enrollment_keys (org_id, name, key_hash, max_usage, expires_at) values ($1, 'agent test', $2, $3, now() + interval '1 hour')`, [org.id, hashEnrollmentKey(t.config.enrollmentKeyPepper, key), maxUsage]);
    return key;
  };
  const options = (extra: Partial<AgentOptions>): AgentOptions => ({
    server,
    websocket: false,
    heartbeatIntervalSeconds: 0.2,
    logShipIntervalMs: 100,
    hostname: 'agent-test-01',
    sampleNow: SAMPLE_NOW,
    log: (line) => lines.push(line),
    ...extra,
  });

  before(async () => {
    t = await testApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    org = await createOrg(t.db, (await createPartner(t.db)).id);
  });
  after(() => t.close());

  it('enrolls, saves its identity (mode 0600), heartbeats, ships its logs and flushes them on stop', async () => {
    const key = await newKey();
    const file = statePath('first');
    const agent = await startAgent(options({ enrollmentKey: key, statePath: file }));
    assert.equal(agent.enrolled, true);
    assert.match(agent.agentId, /^[0-9a-f]{64}$/);

    if (process.platform !== 'win32') assert.equal(statSync(file).mode & 0o777, 0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(saved.agentId, agent.agentId);
    assert.equal(saved.deviceId, agent.deviceId);
    assert.equal(saved.orgId, org.id);
    assert.match(saved.authToken, /\S{20,}/);

    const [device] = await sql<{ hostname: string; agent_version: string; os_type: string; last_seen_at: Date | null }>(
      `select hostname, agent_version, os_type, last_seen_at from devices where id = $1`, [agent.deviceId]);
    assert.deepEqual([device!.hostname, device!.agent_version], ['agent-test-01', AGENT_VERSION]);
    assert.ok(['windows', 'macos', 'linux'].includes(device!.os_type));
    assert.ok(device!.last_seen_at, 'the first heartbeat marked it seen');

    // Heartbeats keep arriving every 0.2 s.
    const firstSeen = device!.last_seen_at!.getTime();
    await waitFor('a later heartbeat', async () => {
      const [row] = await sql<{ last_seen_at: Date }>(`select last_seen_at from devices where id = $1`, [agent.deviceId]);
      return row!.last_seen_at.getTime() > firstSeen;
    });

    const shipped = await waitFor('shipped diagnostic logs', async () => {
      const rows = await sql<{ component: string; level: string; message: string; agent_version: string }>(
        `select component, level, message, agent_version from diagnostic_logs where device_id = $1`, [agent.deviceId]);
      return rows.some((r) => r.component === 'enroll') && rows.some((r) => r.component === 'heartbeat') ? rows : null;
    });
    assert.ok(shipped.every((r) => r.agent_version === AGENT_VERSION && ['debug', 'info', 'warn', 'error'].includes(r.level)));
    assert.ok(shipped.some((r) => r.message.startsWith('enrolled as agent')));
    assert.ok(lines.some((l) => l.includes('[enroll] enrolled as agent')), 'log lines are printed too');

    await assert.rejects(agent.connected(), /disabled/);
    await agent.stop();
    assert.deepEqual(await agent.stopped, { reason: 'stopped' });
    const [flushed] = await sql<{ n: number }>(`select count(*)::int as n from diagnostic_logs where device_id = $1 and message = 'agent stopped'`, [agent.deviceId]);
    assert.equal(flushed!.n, 1, 'the last lines are shipped on stop');
  });

  it('reuses the saved identity on later runs, without an enrollment key', async () => {
    const key = await newKey();
    const file = statePath('reuse');
    const first = await startAgent(options({ enrollmentKey: key, statePath: file }));
    await first.stop();
    const second = await startAgent(options({ statePath: file }));
    assert.equal(second.enrolled, false);
    assert.equal(second.agentId, first.agentId);
    assert.equal(second.deviceId, first.deviceId);
    await second.stop();
    const [usage] = await sql<{ usage_count: number }>(`select usage_count from enrollment_keys where key_hash = $1`, [hashEnrollmentKey(t.config.enrollmentKeyPepper, key)]);
    assert.equal(usage!.usage_count, 1, 'no second enrollment');
    const [devices] = await sql<{ n: number }>(`select count(*)::int as n from devices where hostname = 'agent-test-01' and agent_id = $1`, [first.agentId]);
    assert.equal(devices!.n, 1);
  });

  it('fails to start with a clear error when enrollment is impossible, and saves nothing', async () => {
    const file = statePath('bad-key');
    await assert.rejects(startAgent(options({ enrollmentKey: 'f'.repeat(64), statePath: file })), (err: unknown) => {
      assert.ok(err instanceof AgentStartError);
      assert.equal(err.code, 'ENROLLMENT_KEY_INVALID');
      assert.match(err.message, /^enrollment failed: 401 ENROLLMENT_KEY_INVALID: \S/);
      return true;
    });
    assert.equal(existsSync(file), false);

    const spent = await newKey(1);
    await (await startAgent(options({ enrollmentKey: spent, statePath: statePath('spent-1') }))).stop();
    await assert.rejects(startAgent(options({ enrollmentKey: spent, statePath: statePath('spent-2') })), { code: 'ENROLLMENT_KEY_EXHAUSTED' });

    await assert.rejects(startAgent(options({ statePath: statePath('no-key') })), /--enrollment-key is required/);
    const closed = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(startAgent(options({ server: closed, enrollmentKey: 'k', statePath: statePath('unreachable') })), /enrollment failed: cannot reach/);
    const corrupt = statePath('corrupt');
    writeFileSync(corrupt, '{"agentId": ');
    await assert.rejects(startAgent(options({ statePath: corrupt })), /not valid JSON; delete it to enroll again/);
  });

  it('stops with reason revoked when the device is decommissioned, and refuses to start with that identity', async () => {
    const file = statePath('revoked');
    const agent = await startAgent(options({ enrollmentKey: await newKey(), statePath: file }));
    await sql(`update devices set decommissioned_at = now() where id = $1`, [agent.deviceId]);
    const outcome = await agent.stopped;
    assert.equal(outcome.reason, 'revoked');
    assert.ok(lines.some((l) => l.includes('ERROR [heartbeat] identity revoked')));
    await assert.rejects(startAgent(options({ statePath: file })), (err: unknown) => {
      assert.ok(err instanceof AgentStartError);
      assert.equal(err.code, 'UNAUTHENTICATED');
      assert.match(err.message, /refused the saved identity/);
      return true;
    });
  });
});

describe('reference agent live queries (stand-in WebSocket endpoint)', () => {
  const agentId = 'a'.repeat(64);
  const token = 'stand-in-token';
  const received: { component: string; message: string }[] = [];
  const sockets: WebSocket[] = [];
  let onSocket: ((ws: WebSocket) => void) | null = null;
  let httpServer: http.Server;
  let server: string;

  before(async () => {
    // Just enough of the service: heartbeat, log submission, and the agent socket.
    httpServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.url === `/api/v1/agents/${agentId}/heartbeat`) {
          res.end(JSON.stringify({ ok: true, serverTime: new Date().toISOString(), heartbeatIntervalSeconds: 60 }));
        } else if (req.url === `/api/v1/agents/${agentId}/logs`) {
          received.push(...JSON.parse(body).logs);
          res.statusCode = 201;
          res.end(JSON.stringify({ received: 1 }));
        } else {
          res.statusCode = 404;
          res.end('{}');
        }
      });
    });
    const wss = new WebSocketServer({ noServer: true });
    httpServer.on('upgrade', (req, socket, head) => {
      if (req.url !== `/api/v1/agents/${agentId}/ws` || req.headers.authorization !== `Bearer ${token}`) {
        socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        sockets.push(ws);
        onSocket?.(ws);
      });
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    server = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  });
  after(() => {
    httpServer.closeAllConnections();
    return new Promise<void>((resolve) => httpServer.close(() => resolve()));
  });

  it('answers commands from the sample event log, ignores malformed frames, and reconnects', async () => {
    const file = statePath('stand-in');
    writeFileSync(file, JSON.stringify({ agentId, deviceId: randomBytes(16).toString('hex'), authToken: token, orgId: 'o', siteId: 's', server: `${server}/`, enrolledAt: new Date().toISOString() }), { mode: 0o600 });
    const firstSocket = new Promise<WebSocket>((resolve) => (onSocket = resolve));
    const agent = await startAgent({ server, statePath: file, hostname: 'stand-in-host', sampleSeed: 5, sampleNow: SAMPLE_NOW, logShipIntervalMs: 50, reconnect: { initialMs: 20, maxMs: 50 }, log: () => {} });
    await agent.connected();
    let ws = await firstSocket;
    const expected = createEventLogStore(generateSampleEventLogs({ seed: 5, hostname: 'stand-in-host', now: SAMPLE_NOW }));
    const ask = (command: string, payload: unknown): Promise<CommandResultMessage> => {
      const id = randomBytes(8).toString('hex');
      const reply = new Promise<CommandResultMessage>((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
      ws.send(JSON.stringify({ type: 'command', id, command, payload }));
      return reply.then((r) => (assert.equal(r.id, id), r));
    };

    assert.deepEqual((await ask('eventlogs.list', {})).result, { logs: expected.list() });
    assert.deepEqual(await ask('eventlogs.get', { name: 'nope' }).then(({ status, error }) => ({ status, error })), { status: 'failed', error: 'not_found' });
    const query = { name: 'system', page: 2, limit: 20, level: 'warning' } as const;
    assert.deepEqual((await ask('eventlogs.query', query)).result, expected.query(query));

    ws.send('this is not a command');
    ws.send(JSON.stringify({ type: 'command', command: 'eventlogs.list' }));
    const record = await ask('eventlogs.record', { name: 'Setup', recordId: 950 });
    assert.deepEqual([record.status, record.result], ['completed', expected.record('Setup', 950)]);
    await waitFor('the ignored frames in the shipped log', async () => received.filter((e) => e.component === 'ws' && e.message.startsWith('ignored a malformed message')).length === 2);

    // The socket dies: the agent comes back by itself.
    const secondSocket = new Promise<WebSocket>((resolve) => (onSocket = resolve));
    ws.terminate();
    ws = await secondSocket;
    await agent.connected();
    assert.equal((await ask('eventlogs.get', { name: 'SECURITY' })).status, 'completed');

    const closing = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await agent.stop();
    assert.equal(await closing, 1000);
    assert.ok(received.some((e) => e.message === 'agent stopped'));
    assert.equal(sockets.length, 2);
  });
});
