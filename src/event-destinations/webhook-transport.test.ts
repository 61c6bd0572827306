// Webhook delivery against real HTTP receivers on 127.0.0.1 (so allowPrivate: true, except where the
// guard itself is tested). Signatures are verified by hand with node:crypto (OpenSSL's HMAC): the
// other npm implementation, svix, is no independent check, as svix 2.x depends on standardwebhooks
// and 1.x carried the same code.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { newWebhookSecret, sendWebhook } from './webhook-transport.js';

const lan = { allowPrivate: true };

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: (path?: string) => string;
  received: Received[];
  connections: number;
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
after(() => Promise.all(receivers.map((r) => r.close())));

/** An HTTP server on a free port of 127.0.0.1; `answer` gets each request after its body was read. */
async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse, call: number) => void): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(req, res, received.length);
    });
  });
  const r: Receiver = {
    url: (path = '/hook') => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    received,
    connections: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  server.on('connection', () => r.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(r);
  return r;
}

/** The spec's v1 signature, with OpenSSL's HMAC and node's base64 rather than any webhook library. */
function v1Signature(secret: string, r: Received): string {
  assert.match(secret, /^whsec_/);
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`;
  return `v1,${createHmac('sha256', key).update(signed, 'utf8').digest('base64')}`;
}

/** A receiver's check per the spec: some v1 signature in the header matches, timestamp within 5 minutes. */
function verifies(secret: string, r: Received): boolean {
  const timestamp = Number(r.headers['webhook-timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
  const expected = Buffer.from(v1Signature(secret, r));
  return String(r.headers['webhook-signature'])
    .split(' ')
    .some((sig) => sig.startsWith('v1,') && sig.length === expected.length && timingSafeEqual(Buffer.from(sig), expected));
}

/** One signature per secret, in order, each verifying with its own secret and not with a stranger's. */
function assertSigned(r: Received, secrets: string[]): void {
  const signatures = String(r.headers['webhook-signature']).split(' ');
  assert.deepEqual(signatures, secrets.map((secret) => v1Signature(secret, r)));
  for (const secret of secrets) assert.ok(verifies(secret, r));
  assert.equal(verifies(newWebhookSecret(), r), false);
}

const body = JSON.stringify({ type: 'api_key.create', timestamp: '2026-11-25T10:00:00.123Z', data: { name: 'Zoë’s key 東京 🚀' } });

describe('newWebhookSecret', () => {
  it('is whsec_ and 32 random bytes in base64', () => {
    const a = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
    assert.notEqual(a, newWebhookSecret());
  });
});

describe('sendWebhook', () => {
  const secret = newWebhookSecret();

  it('POSTs the body with Standard Webhooks headers; a 200 is delivered', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('thanks'));
    const at = Date.now() - 90_000;
    const result = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'msg_0001', body, policy: lan, now: () => at });
    assert.equal(result.delivered, true);
    assert.equal(result.responseStatus, 200);
    assert.equal(result.error, null);
    assert.ok(result.durationMs >= 0 && result.durationMs < 5000);
    assert.equal(r.received.length, 1);
    const [got] = r.received as [Received];
    assert.equal(got.path, '/hook');
    assert.equal(got.body, body, 'the exact bytes, UTF-8');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], 'dms-webhooks/1');
    assert.equal(got.headers['webhook-id'], 'msg_0001');
    assert.equal(got.headers['webhook-timestamp'], String(Math.floor(at / 1000)));
    assertSigned(got, [secret]);
  });

  it('reports a 500 as not delivered, and a retry that gets 200 as delivered, with the same id', async () => {
    const r = await receiver((_req, res, call) => res.writeHead(call === 1 ? 500 : 200).end(call === 1 ? 'oops' : ''));
    const first = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'msg_retry', body, policy: lan });
    assert.deepEqual({ ...first, durationMs: 0 }, { delivered: false, responseStatus: 500, error: 'HTTP 500', durationMs: 0 });
    const second = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'msg_retry', body, policy: lan });
    assert.equal(second.delivered, true);
    assert.equal(second.responseStatus, 200);
    assert.equal(r.received.length, 2);
    for (const got of r.received) {
      assert.equal(got.headers['webhook-id'], 'msg_retry');
      assertSigned(got, [secret]);
    }
  });

  it('signs with both secrets during a rotation, each signature verifying with its own secret', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const previous = newWebhookSecret();
    const result = await sendWebhook({ url: r.url(), secrets: [secret, previous], messageId: 'msg_rotate', body, policy: lan });
    assert.equal(result.delivered, true);
    assert.equal(result.responseStatus, 204);
    assertSigned(r.received[0]!, [secret, previous]);
  });

  it('gives up when no answer comes within the timeout', async () => {
    let closedByClient = false;
    const r = await receiver((req) => req.socket.on('close', () => (closedByClient = true))); // never answers
    const result = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'msg_slow', body, policy: lan, timeoutMs: 300 });
    assert.equal(result.delivered, false);
    assert.equal(result.responseStatus, null);
    assert.equal(result.error, 'no answer within 0.3 s');
    assert.ok(result.durationMs >= 290 && result.durationMs < 3000, `took ${result.durationMs} ms`);
    await waitFor(() => closedByClient);
  });

  it('does not follow a redirect', async () => {
    const r = await receiver((_req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
    const result = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'msg_302', body, policy: lan });
    assert.equal(result.delivered, false);
    assert.equal(result.responseStatus, 302);
    assert.equal(result.error, 'redirect not followed (HTTP 302)');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(r.received.map((got) => got.path), ['/hook'], 'the redirect target is never asked');
  });

  it('does not count a 200 whose body was cut off as delivered', async () => {
    const r = await receiver((req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"partial":', () => setTimeout(() => req.socket.destroy(), 20));
    });
    const result = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'msg_cut', body, policy: lan });
    assert.equal(result.delivered, false);
    assert.equal(result.responseStatus, 200);
    assert.equal(result.error, 'connection closed before the response ended');
  });

  it('reads no more than the start of a huge response body, then hangs up', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    let clientGone = false;
    const r = await receiver(async (_req, res) => {
      res.on('close', () => (clientGone = true));
      res.writeHead(200, { 'content-type': 'text/plain' });
      // Up to 1 GiB, at the pace the client reads it.
      while (!clientGone && sent < 1024 ** 3) {
        sent += chunk.length;
        if (!res.write(chunk)) await drainedOrClosed(res);
      }
      res.end();
    });
    const heapBefore = process.memoryUsage().heapUsed;
    const result = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'msg_huge', body, policy: lan });
    assert.equal(result.delivered, true);
    assert.equal(result.responseStatus, 200);
    await waitFor(() => clientGone);
    assert.ok(sent < 32 * 1024 * 1024, `the receiver got to send ${sent} bytes`);
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 16 * 1024 * 1024, 'the body was not kept');
  });

  it('refuses loopback when private addresses are not allowed, before connecting', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const port = new URL(r.url()).port;
    const strict = { allowPrivate: false };
    const literal = await sendWebhook({ url: `https://127.0.0.1:${port}/hook`, secrets: [secret], messageId: 'm', body, policy: strict });
    assert.deepEqual({ ...literal, durationMs: 0 }, { delivered: false, responseStatus: null, error: 'destination not allowed: loopback address 127.0.0.1', durationMs: 0 });
    const mapped = await sendWebhook({ url: `https://[::ffff:127.0.0.1]:${port}/hook`, secrets: [secret], messageId: 'm', body, policy: strict });
    assert.equal(mapped.error, 'destination not allowed: loopback address ::ffff:7f00:1');
    const named = await sendWebhook({ url: `https://localhost:${port}/hook`, secrets: [secret], messageId: 'm', body, policy: strict });
    assert.equal(named.delivered, false);
    assert.match(String(named.error), /^destination not allowed: loopback address (127\.0\.0\.1|::1)$/);
    const plain = await sendWebhook({ url: r.url(), secrets: [secret], messageId: 'm', body, policy: strict });
    assert.equal(plain.error, 'destination not allowed: webhook URLs must use https://');
    assert.equal(r.connections, 0);
    assert.equal(r.received.length, 0);
  });

  it('reports connection failures briefly, never throwing', async () => {
    const r = await receiver(() => undefined);
    const url = r.url();
    await r.close();
    const refused = await sendWebhook({ url, secrets: [secret], messageId: 'm', body, policy: lan });
    assert.deepEqual({ ...refused, durationMs: 0 }, { delivered: false, responseStatus: null, error: 'connection refused', durationMs: 0 });
    const tls = await sendWebhook({ url: url.replace('http:', 'https:'), secrets: [secret], messageId: 'm', body, policy: lan });
    assert.equal(tls.error, 'connection refused');
    const plain = await receiver((_req, res) => res.writeHead(200).end());
    const wrongProtocol = await sendWebhook({ url: plain.url().replace('http:', 'https:'), secrets: [secret], messageId: 'm', body, policy: lan });
    assert.equal(wrongProtocol.delivered, false);
    assert.match(String(wrongProtocol.error), /^TLS error: /);
    assert.ok(!String(wrongProtocol.error).includes(secret.slice(6)));
    const badSecret = await sendWebhook({ url, secrets: ['whsec_***not base64***'], messageId: 'm', body, policy: lan });
    assert.equal(badSecret.error, 'invalid signing secret');
    const badId = await sendWebhook({ url, secrets: [secret], messageId: 'line\nbreak', body, policy: lan });
    assert.equal(badId.delivered, false);
    assert.equal((await sendWebhook({ url: 'not a url', secrets: [secret], messageId: 'm', body, policy: lan })).error, 'invalid URL');
  });
});

function drainedOrClosed(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
