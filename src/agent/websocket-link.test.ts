// The agent's WebSocket link against a local stand-in server (not the service's /ws route): the
// bearer header, replies on the same socket, reconnecting after a close and after refused
// upgrades, the back-off bounds, and a clean close that stops reconnecting.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AgentLogger } from './diagnostic-log.js';
import { backoffDelay, openWebSocketLink, type WebSocketLink } from './websocket-link.js';

const silent: AgentLogger = { debug() {}, info() {}, warn() {}, error() {} };

function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve) => ws.once('message', (data) => resolve(data.toString())));
}

describe('websocket link', () => {
  let server: WebSocketServer;
  let url: string;
  let refuseNext = 0;
  const upgrades: { authorization: string | undefined; at: number; refused: boolean }[] = [];
  const connections: WebSocket[] = [];
  let onConnection: ((ws: WebSocket) => void) | null = null;

  before(async () => {
    server = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      verifyClient: (info, done) => {
        const refused = refuseNext > 0;
        if (refused) refuseNext--;
        upgrades.push({ authorization: info.req.headers.authorization, at: Date.now(), refused });
        done(!refused, 401);
      },
    });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/agents/abc/ws`;
    server.on('connection', (ws) => {
      connections.push(ws);
      onConnection?.(ws);
    });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const open = (onFrame: (frame: string, send: (text: string) => void) => void = () => {}): WebSocketLink =>
    openWebSocketLink({ url, token: 'tok-123', log: silent, onFrame, initialBackoffMs: 20, maxBackoffMs: 80, random: () => 0.5 });

  it('computes exponential back-off with jitter between half and all of the ceiling, capped', () => {
    assert.equal(backoffDelay(0, 1000, 30_000, () => 0), 500);
    assert.equal(backoffDelay(0, 1000, 30_000, () => 0.999999), 1000);
    assert.equal(backoffDelay(3, 1000, 30_000, () => 0), 4000);
    for (const attempt of [5, 6, 50, 5000]) {
      const low = backoffDelay(attempt, 1000, 30_000, () => 0);
      const high = backoffDelay(attempt, 1000, 30_000, () => 0.999999);
      assert.ok(low >= 15_000 && high <= 30_000, `attempt ${attempt}: ${low}..${high}`);
    }
  });

  it('sends the bearer token, delivers frames and sends replies on the same socket', async () => {
    upgrades.length = 0;
    const arrived = new Promise<WebSocket>((resolve) => (onConnection = resolve));
    const link = open((frame, send) => send(`echo:${frame}`));
    await link.connected();
    assert.equal(link.isOpen(), true);
    const ws = await arrived;
    assert.equal(upgrades[0]!.authorization, 'Bearer tok-123');
    const answer = nextMessage(ws);
    ws.send('{"hello":1}');
    assert.equal(await answer, 'echo:{"hello":1}');
    await link.close();
    assert.equal(link.isOpen(), false);
  });

  it('reconnects when the server closes the socket, and after refused upgrades', async () => {
    const first = new Promise<WebSocket>((resolve) => (onConnection = resolve));
    const link = open();
    await link.connected();
    const ws = await first;
    upgrades.length = 0;
    refuseNext = 3;
    const second = new Promise<WebSocket>((resolve) => (onConnection = resolve));
    ws.close(1012, 'restart');
    await second;
    await link.connected();
    assert.deepEqual(upgrades.map((u) => u.refused), [true, true, true, false]);
    // Delays with random 0.5: 15, 30, 60, 60 ms (ceilings 20, 40, 80, 80) — growing, capped.
    const gaps = upgrades.slice(1).map((u, i) => u.at - upgrades[i]!.at);
    assert.ok(gaps[0]! >= 10 && gaps[1]! >= 25 && gaps[2]! >= 55, `gaps ${gaps.join(', ')}`);
    await link.close();
  });

  it('closes with 1000, rejects connected() afterwards and does not reconnect', async () => {
    const arrived = new Promise<WebSocket>((resolve) => (onConnection = resolve));
    const link = open();
    await link.connected();
    const ws = await arrived;
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    const before = connections.length;
    await link.close();
    assert.equal(await closed, 1000);
    await assert.rejects(link.connected(), /closed/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(connections.length, before);
  });

  it('can be closed while it is still retrying', async () => {
    refuseNext = 1000;
    const link = open();
    const waiting = link.connected();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await link.close();
    await assert.rejects(waiting, /closed/);
    const count = upgrades.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(upgrades.length, count, 'no attempt after close');
    refuseNext = 0;
  });
});
