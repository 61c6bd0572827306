// Live event-log queries through a real socket: the agent socket's authentication, every outcome
// of API.md §2/§7 (answered, not_found, agent failure, bad reply, timeout, offline, disconnect),
// parameters validated and forwarded, tenant checks before anything is sent, one socket per agent,
// malformed frames, the audit entry, sockets closed by a decommission or an organization's deletion,
// and (with Redis) a device reached and sockets closed through another instance.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { testApp, testRedisUrl, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';
import type { CommandMessage } from './protocol.js';

type Reply = (command: CommandMessage) => unknown;
const DESCRIPTOR = { name: 'System', displayName: 'System', recordCount: 2, maxSize: 1_048_576, retentionDays: 30, lastWriteTime: '2026-11-01T00:00:00.000Z' };
const ENTRY = { recordId: 7, timeCreated: '2026-11-01T00:00:00.000Z', level: 'error', source: 'Disk', eventId: 11, message: 'bad block', category: 'hardware', user: null, computer: 'ws-01' };

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/** A minimal agent: answers each command with what `reply` returns (a full command_result), or not at all for undefined. */
function connectAgent(host: string, agentId: string, token: string, reply: Reply, received: CommandMessage[] = []): Promise<WebSocket> {
  const socket = new WebSocket(`ws://${host}/api/v1/agents/${agentId}/ws`, { headers: { authorization: `Bearer ${token}` } });
  socket.on('message', (data) => {
    const command = JSON.parse(String(data)) as CommandMessage;
    received.push(command);
    const answer = reply(command);
    if (answer !== undefined) socket.send(typeof answer === 'string' ? answer : JSON.stringify(answer));
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once('error', reject);
  });
}

const completed = (command: CommandMessage, result: unknown) => ({ type: 'command_result', id: command.id, status: 'completed', result });
const honest: Reply = (command) => {
  switch (command.command) {
    case 'eventlogs.list': return completed(command, { logs: [DESCRIPTOR] });
    case 'eventlogs.get': return command.payload.name.toLowerCase() === 'system' ? completed(command, DESCRIPTOR) : { type: 'command_result', id: command.id, status: 'failed', error: 'not_found' };
    case 'eventlogs.query': return completed(command, { events: [ENTRY], total: 1, hasMore: false });
    case 'eventlogs.record': return completed(command, ENTRY);
  }
};
const closed = (socket: WebSocket) => new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
/** The socket's close, or a failure when it is still open after `ms`. */
const closedWithin = (socket: WebSocket, ms: number) => Promise.race([
  closed(socket),
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the socket is still open after ${ms} ms`)), ms).unref()),
]);
const decommission = (app: TestApp['app'], session: Session, deviceId: string) => as(app, session)({ method: 'DELETE', url: `/api/v1/devices/${deviceId}` });

describe('live event-log queries', () => {
  let t: TestApp;
  let host: string;
  let org: TestOrg;
  let user: Session;
  let stranger: Session;
  const get = (url: string, session: Session = user) => as(t.app, session)({ method: 'GET', url });

  before(async () => {
    t = await testApp({ env: { LIVE_QUERY_TIMEOUT_MS: '400' } });
    host = await listen(t);
    org = await createOrg(t.db, (await createPartner(t.db)).id);
    user = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' }));
    stranger = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: (await createOrg(t.db, (await createPartner(t.db)).id)).id }));
  });
  after(() => t.close());

  it('refuses the socket before the upgrade: unknown agent 404, wrong token 401', async () => {
    const device = await createDevice(t.db, org.id);
    await assert.rejects(connectAgent(host, 'c'.repeat(64), device.authToken, honest), /HTTP 404/);
    await assert.rejects(connectAgent(host, device.agentId, 'wrong', honest), /HTTP 401/);
    // A plain GET (no upgrade) from the agent is a problem too, not an empty 404.
    const plain = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${device.agentId}/ws`, headers: { authorization: `Bearer ${device.authToken}` } });
    assertProblem(plain, 426, 'UPGRADE_REQUIRED');
    assert.equal(plain.headers.upgrade, 'websocket');
  });

  it('answers all four operations under both route namespaces, and shows the device online', async () => {
    const device = await createDevice(t.db, org.id);
    const received: CommandMessage[] = [];
    const socket = await connectAgent(host, device.agentId, device.authToken, honest, received);
    try {
      for (const base of [`/api/v1/system-tools/devices/${device.id}/eventlogs`, `/api/v1/devices/${device.id}/live/eventlogs`]) {
        assert.deepEqual((await get(base)).json(), { data: [DESCRIPTOR] });
        assert.deepEqual((await get(`${base}/SYSTEM`)).json(), { data: DESCRIPTOR });
        assertProblem(await get(`${base}/Nope`), 404, 'NOT_FOUND');
        const events = await get(`${base}/System/events?level=error&source=Disk&startTime=2026-10-01T00:00:00Z&endTime=2026-11-02T00:00:00Z&eventId=11&page=2&limit=1000`);
        assert.equal(events.statusCode, 200, events.body);
        assert.deepEqual(events.json(), { data: [ENTRY], pagination: { page: 2, limit: 500, total: 1, hasMore: false } });
        assert.deepEqual((await get(`${base}/System/events/7`)).json(), { data: ENTRY });
      }
      const query = received.find((c) => c.command === 'eventlogs.query')!;
      assert.deepEqual(query.payload, { name: 'System', page: 2, limit: 500, level: 'error', source: 'Disk', startTime: '2026-10-01T00:00:00Z', endTime: '2026-11-02T00:00:00Z', eventId: 11 });
      assert.equal((await get(`/api/v1/devices/${device.id}`)).json().status, 'online');
      const key = await createApiKey(t.db, org.id, { scopes: ['devices:read'] });
      const withKey = await t.app.inject({ method: 'GET', url: `/api/v1/devices/${device.id}/live/eventlogs`, headers: { 'x-api-key': key.key } });
      assert.equal(withKey.statusCode, 200);
      const noScope = await createApiKey(t.db, org.id, { scopes: ['audit:read'] });
      assertProblem(await t.app.inject({ method: 'GET', url: `/api/v1/devices/${device.id}/live/eventlogs`, headers: { 'x-api-key': noScope.key } }), 403, 'API_KEY_SCOPE_DENIED');
      const audit = (await as(t.app, user)({ method: 'GET', url: '/api/v1/audit-logs/logs?action=device.eventlogs.query&limit=100' })).json().data
        .filter((e: { resourceId: string }) => e.resourceId === device.id);
      assert.ok(audit.length >= 10);
      assert.ok(audit.some((e: { result: string; details: { command: string } }) => e.result === 'failure' && e.details.command === 'eventlogs.get'));
    } finally {
      socket.close();
    }
  });

  it('validates parameters and checks the tenant before anything reaches the agent', async () => {
    const device = await createDevice(t.db, org.id);
    const received: CommandMessage[] = [];
    const socket = await connectAgent(host, device.agentId, device.authToken, honest, received);
    try {
      const base = `/api/v1/devices/${device.id}/live/eventlogs/System/events`;
      for (const query of ['eventId=abc', 'startTime=yesterday', 'level=loud', 'page=x', 'page=9007199254740993', 'limit=0x10']) {
        assertProblem(await get(`${base}?${query}`), 400, 'VALIDATION_FAILED');
      }
      const reversed = await get(`${base}?startTime=2026-11-02T00:00:00Z&endTime=2026-11-01T00:00:00Z`);
      assertProblem(reversed, 400, 'VALIDATION_FAILED');
      assert.equal((reversed.json() as { errors: { path: string }[] }).errors[0]!.path, 'query.startTime');
      assertProblem(await get(`/api/v1/devices/${device.id}/live/eventlogs/System/events/x`), 400, 'VALIDATION_FAILED');
      assertProblem(await get(`/api/v1/devices/${device.id}/live/eventlogs`, stranger), 404, 'NOT_FOUND');
      assertProblem(await get(`/api/v1/devices/00000000-0000-4000-8000-000000000000/live/eventlogs`), 404, 'NOT_FOUND');
      assert.equal(received.length, 0, 'nothing was sent to the agent');
    } finally {
      socket.close();
    }
  });

  it('maps every failure: offline 409, agent failure 502, bad reply 502, silence 504, disconnect at once', async () => {
    const device = await createDevice(t.db, org.id);
    const base = `/api/v1/devices/${device.id}/live/eventlogs`;
    assertProblem(await get(base), 409, 'DEVICE_OFFLINE');
    let mode = 'failed';
    const socket = await connectAgent(host, device.agentId, device.authToken, (command) => {
      if (mode === 'failed') return { type: 'command_result', id: command.id, status: 'failed', error: 'access denied' };
      if (mode === 'bad') return completed(command, { logs: 'not a list' });
      // Fields the descriptor must have, missing or of the wrong type: the response schema would refuse them.
      if (mode === 'incomplete') return completed(command, { logs: [{ name: 'System', recordCount: 1 }] });
      if (mode === 'mistyped') return command.command === 'eventlogs.query' ? completed(command, { events: [{ ...ENTRY, eventId: 'four' }], hasMore: false }) : undefined;
      if (mode === 'late') {
        setTimeout(() => socket.send(JSON.stringify(completed(command, { logs: [DESCRIPTOR] }))), 600);
        return undefined;
      }
      return undefined;
    });
    assert.match(String(assertProblem(await get(base), 502, 'AGENT_ERROR').detail), /access denied/);
    for (mode of ['bad', 'incomplete']) assertProblem(await get(base), 502, 'AGENT_BAD_REPLY');
    mode = 'mistyped';
    assertProblem(await get(`${base}/System/events`), 502, 'AGENT_BAD_REPLY');
    mode = 'late';
    assertProblem(await get(base), 504, 'AGENT_TIMEOUT');
    await new Promise((resolve) => setTimeout(resolve, 400)); // the late reply arrives and is dropped
    mode = 'silent';
    const pending = get(base);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    socket.close();
    assertProblem(await pending, 409, 'DEVICE_OFFLINE');
    assert.ok(Date.now() - started < 350, 'the caller learns at once, not at the timeout');
  });

  it('answers a reply nobody can parse with 502 AGENT_BAD_REPLY, and closes that socket', async () => {
    const device = await createDevice(t.db, org.id);
    const socket = await connectAgent(host, device.agentId, device.authToken, () => '{"type":"command_result", garbage');
    const socketClosed = closed(socket);
    assertProblem(await get(`/api/v1/devices/${device.id}/live/eventlogs`), 502, 'AGENT_BAD_REPLY');
    assert.deepEqual(await socketClosed, { code: 1008, reason: 'malformed message' });
  });

  it('keeps one socket per agent and closes sockets that send garbage', async () => {
    const device = await createDevice(t.db, org.id);
    const first = await connectAgent(host, device.agentId, device.authToken, honest);
    const firstClosed = closed(first);
    const second = await connectAgent(host, device.agentId, device.authToken, honest);
    assert.equal((await firstClosed).code, 4000);
    assert.equal((await get(`/api/v1/devices/${device.id}/live/eventlogs`)).statusCode, 200);
    const secondClosed = closed(second);
    second.send('{not json');
    assert.deepEqual(await secondClosed, { code: 1008, reason: 'malformed message' });
    const third = await connectAgent(host, device.agentId, device.authToken, honest);
    const thirdClosed = closed(third);
    third.send(Buffer.alloc(5 * 1024 * 1024));
    assert.equal((await thirdClosed).code, 1009);
    await t.app.inject({ method: 'DELETE', url: `/api/v1/devices/${device.id}`, headers: { authorization: `Bearer ${(await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }))).accessToken}` } });
    await assert.rejects(connectAgent(host, device.agentId, device.authToken, honest), /HTTP 401/);
  });

  it('closes a decommissioned device’s socket at once, and refuses it again', async () => {
    const device = await createDevice(t.db, org.id);
    const admin = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }));
    const socket = await connectAgent(host, device.agentId, device.authToken, honest);
    const socketClosed = closedWithin(socket, 2000);
    socketClosed.catch(() => {}); // awaited below
    assert.deepEqual((await decommission(t.app, admin, device.id)).json(), { success: true });
    assert.deepEqual(await socketClosed, { code: 4001, reason: 'device decommissioned' });
    await assert.rejects(connectAgent(host, device.agentId, device.authToken, honest), /HTTP 401/);
    assertProblem(await get(`/api/v1/devices/${device.id}/live/eventlogs`), 404, 'NOT_FOUND');
  });

  it('closes the sockets of a deleted organization’s agents at once, and only those', async () => {
    const partner = await createPartner(t.db);
    const [doomed, kept] = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
    const admin = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id }));
    const devices = [await createDevice(t.db, doomed.id), await createDevice(t.db, doomed.id)];
    const sockets = await Promise.all(devices.map((device) => connectAgent(host, device.agentId, device.authToken, honest)));
    const survivor = await createDevice(t.db, kept.id);
    const survivorSocket = await connectAgent(host, survivor.agentId, survivor.authToken, honest);
    const socketsClosed = sockets.map((socket) => closedWithin(socket, 2000));
    for (const socketClosed of socketsClosed) socketClosed.catch(() => {}); // awaited below
    assert.deepEqual((await as(t.app, admin)({ method: 'DELETE', url: `/api/v1/orgs/organizations/${doomed.id}` })).json(), { success: true });
    for (const socketClosed of socketsClosed) assert.deepEqual(await socketClosed, { code: 4001, reason: 'organization deleted' });
    await assert.rejects(connectAgent(host, devices[0]!.agentId, devices[0]!.authToken, honest), /HTTP 401/);
    assert.equal(survivorSocket.readyState, WebSocket.OPEN);
    assert.equal((await as(t.app, admin)({ method: 'GET', url: `/api/v1/devices/${survivor.id}/live/eventlogs` })).statusCode, 200);
    survivorSocket.close();
  });
});

const redisUrl = await testRedisUrl();

describe('live queries across instances (Redis)', { skip: redisUrl === null ? 'Redis is not reachable' : false }, () => {
  it('answers a query arriving at instance A for a device connected to instance B', async () => {
    const a = await testApp({ env: { REDIS_URL: redisUrl! } });
    const b = await testApp({ env: { REDIS_URL: redisUrl! }, db: a.db });
    try {
      const hostB = await listen(b);
      const org = await createOrg(a.db, (await createPartner(a.db)).id);
      const user = await login(a.app, await createUser(a.db, { scope: 'organization', orgId: org.id }));
      const device = await createDevice(a.db, org.id);
      const offline = await as(a.app, user)({ method: 'GET', url: `/api/v1/devices/${device.id}/live/eventlogs` });
      assertProblem(offline, 409, 'DEVICE_OFFLINE');
      const socket = await connectAgent(hostB, device.agentId, device.authToken, honest);
      await new Promise((resolve) => setTimeout(resolve, 100)); // presence recorded
      const res = await as(a.app, user)({ method: 'GET', url: `/api/v1/devices/${device.id}/live/eventlogs/system/events/7` });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { data: ENTRY });
      assertProblem(await as(a.app, user)({ method: 'GET', url: `/api/v1/devices/${device.id}/live/eventlogs/nope` }), 404, 'NOT_FOUND');
      socket.close();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assertProblem(await as(a.app, user)({ method: 'GET', url: `/api/v1/devices/${device.id}/live/eventlogs` }), 409, 'DEVICE_OFFLINE');
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('closes a decommissioned device’s socket on the instance holding it', async () => {
    const a = await testApp({ env: { REDIS_URL: redisUrl! } });
    const b = await testApp({ env: { REDIS_URL: redisUrl! }, db: a.db });
    try {
      const hostA = await listen(a);
      const hostB = await listen(b);
      const org = await createOrg(a.db, (await createPartner(a.db)).id);
      const admin = await login(a.app, await createUser(a.db, { scope: 'organization', orgId: org.id }));
      const device = await createDevice(a.db, org.id);
      const socket = await connectAgent(hostB, device.agentId, device.authToken, honest);
      await new Promise((resolve) => setTimeout(resolve, 100)); // presence recorded
      const socketClosed = closedWithin(socket, 2000);
      socketClosed.catch(() => {}); // awaited below
      assert.deepEqual((await decommission(a.app, admin, device.id)).json(), { success: true });
      assert.deepEqual(await socketClosed, { code: 4001, reason: 'device decommissioned' });
      for (const host of [hostA, hostB]) await assert.rejects(connectAgent(host, device.agentId, device.authToken, honest), /HTTP 401/);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('closes a deleted organization’s agent sockets on every instance', async () => {
    const a = await testApp({ env: { REDIS_URL: redisUrl! } });
    const b = await testApp({ env: { REDIS_URL: redisUrl! }, db: a.db });
    try {
      const [hostA, hostB] = [await listen(a), await listen(b)];
      const partner = await createPartner(a.db);
      const [doomed, kept] = [await createOrg(a.db, partner.id), await createOrg(a.db, partner.id)];
      const admin = await login(a.app, await createUser(a.db, { scope: 'partner', partnerId: partner.id }));
      const [onA, onB, survivor] = [await createDevice(a.db, doomed.id), await createDevice(a.db, doomed.id), await createDevice(a.db, kept.id)];
      const sockets = [await connectAgent(hostA, onA.agentId, onA.authToken, honest), await connectAgent(hostB, onB.agentId, onB.authToken, honest)];
      const survivorSocket = await connectAgent(hostB, survivor.agentId, survivor.authToken, honest);
      const socketsClosed = sockets.map((socket) => closedWithin(socket, 2000));
      for (const socketClosed of socketsClosed) socketClosed.catch(() => {}); // awaited below
      assert.deepEqual((await as(a.app, admin)({ method: 'DELETE', url: `/api/v1/orgs/organizations/${doomed.id}` })).json(), { success: true });
      for (const socketClosed of socketsClosed) assert.deepEqual(await socketClosed, { code: 4001, reason: 'organization deleted' });
      await new Promise((resolve) => setTimeout(resolve, 100)); // a stray close would have landed by now
      assert.equal(survivorSocket.readyState, WebSocket.OPEN);
      survivorSocket.close();
    } finally {
      await b.close();
      await a.close();
    }
  });
});
