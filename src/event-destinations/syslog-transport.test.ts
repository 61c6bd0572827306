// Syslog frames directly, then delivery to a real rsyslogd over TCP and TLS (test/support/rsyslog.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../test/support/free-port.js';
import { RSYSLOG_MISSING, rsyslogdPath, startRsyslog, type Rsyslog } from '../../test/support/rsyslog.js';
import { sendSyslog, syslogFrame } from './syslog-transport.js';

const lan = { allowPrivate: true };
const timestamp = '2026-11-25T10:00:00.123Z';
const host = os.hostname().replace(/[^\x21-\x7e]/g, '').slice(0, 255) || '-';

/** Splits a frame into its octet count and message, checking the count is the message's UTF-8 length. */
function unframe(frame: string): string {
  const match = /^([1-9]\d*) ([\s\S]*)$/.exec(frame);
  assert.ok(match, `not octet-counted: ${frame}`);
  assert.equal(Number(match[1]), Buffer.byteLength(match[2]!, 'utf8'));
  return match[2]!;
}

describe('syslogFrame', () => {
  it('is an RFC 5424 message from dms, facility log audit, severity by result', () => {
    const msg = JSON.stringify({ type: 'api_key.create', timestamp, data: { id: 1 } });
    for (const [result, pri] of [['success', 110], ['denied', 109], ['failure', 108]] as const) {
      const frame = syslogFrame({ timestamp, msgId: 'api_key.create', msg, result });
      assert.equal(unframe(frame), `<${pri}>1 ${timestamp} ${host} dms - api_key.create - ${msg}`);
    }
  });

  it('counts octets, not characters, for multi-byte UTF-8', () => {
    const msg = JSON.stringify({ data: { name: 'Zoë — 東京 🚀' } });
    const frame = syslogFrame({ timestamp, msgId: 'device.rename', msg, result: 'success' });
    const message = unframe(frame);
    assert.ok(Buffer.byteLength(message) > message.length, 'the message has multi-byte characters');
    assert.ok(!message.includes('\uFEFF'), 'no BOM');
    assert.equal(frame, `${Buffer.byteLength(message)} ${message}`);
  });

  it('cuts MSGID to 32 printable ASCII characters, else leaves it nil', () => {
    const msgIdOf = (msgId: string) => unframe(syslogFrame({ timestamp, msgId, msg: '{}', result: 'success' })).split(' ')[5];
    assert.equal(msgIdOf('a'.repeat(40)), 'a'.repeat(32));
    assert.equal(msgIdOf('event_destination.rotate_secret_x'), 'event_destination.rotate_secret_');
    assert.equal(msgIdOf('destination.test'), 'destination.test');
    assert.equal(msgIdOf(''), '-');
    assert.equal(msgIdOf('two words'), '-');
    assert.equal(msgIdOf('café'), '-');
  });

  it('takes the hostname as printable ASCII and keeps RFC 5424 timestamps, nil for others', () => {
    const fields = (ts: string) => unframe(syslogFrame({ timestamp: ts, msgId: 'x', msg: '{}', result: 'success' })).split(' ');
    const [, ts, hostname, app, procId, , sd] = fields(timestamp);
    assert.equal(ts, timestamp);
    assert.match(hostname!, /^[\x21-\x7e]{1,255}$/);
    assert.equal(hostname, host);
    assert.deepEqual([app, procId, sd], ['dms', '-', '-']);
    assert.equal(fields('2026-11-25T10:00:00.123456+01:00')[1], '2026-11-25T10:00:00.123456+01:00');
    assert.equal(fields('2026-11-25T10:00:00.1234567Z')[1], '2026-11-25T10:00:00.123Z', 'more than six fraction digits is normalised');
    assert.equal(fields('not a time')[1], '-');
  });
});

// Without rsyslogd a developer gets a skip; CI must have it, so there the suite fails instead.
const rsyslogSkip = !rsyslogdPath() && !process.env.CI ? `${RSYSLOG_MISSING}; skipping delivery to a real rsyslog` : false;

describe('sendSyslog to a real rsyslog', { skip: rsyslogSkip }, () => {
  let rsyslog: Rsyslog;
  before(async () => {
    rsyslog = await startRsyslog();
  });
  after(() => rsyslog?.stop());

  /** Three entries of one batch, tagged so each test finds its own among everything received. */
  function batch(tag: string) {
    const results = ['success', 'denied', 'failure'] as const;
    const messages = results.map((result, i) =>
      JSON.stringify({ type: 'device.rename', timestamp, data: { tag, seq: i + 1, result, name: `Zoë’s laptop — 東京 🚀 #${i + 1}` } }),
    );
    const frames = messages.map((msg, i) => syslogFrame({ timestamp, msgId: 'device.rename', msg, result: results[i]! }));
    return { frames, expected: frames.map(unframe) };
  }

  async function receivedWith(tag: string, count: number): Promise<string[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const mine = (await rsyslog.messages()).filter((m) => m.includes(`"tag":"${tag}"`));
      if (mine.length >= count || Date.now() > deadline) return mine;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('delivers a batch over syslog+tcp in order and byte for byte', async () => {
    const tag = randomUUID();
    const { frames, expected } = batch(tag);
    const result = await sendSyslog({ url: `syslog+tcp://127.0.0.1:${rsyslog.tcpPort}`, caCertificate: null, frames, policy: lan });
    assert.deepEqual({ ...result, durationMs: 0 }, { delivered: true, responseStatus: null, error: null, durationMs: 0 });
    const received = await receivedWith(tag, 3);
    assert.deepEqual(received, expected);
    assert.match(received[0]!, /^<110>1 2026-11-25T10:00:00\.123Z \S+ dms - device\.rename - \{"type":"device\.rename"/);
    assert.equal(JSON.parse(received[2]!.split(' - ').slice(2).join(' - ')).data.name, 'Zoë’s laptop — 東京 🚀 #3');
  });

  it('delivers a batch over syslog+tls, verifying the collector against the given CA', async () => {
    const tag = randomUUID();
    const { frames, expected } = batch(tag);
    const result = await sendSyslog({ url: `syslog+tls://127.0.0.1:${rsyslog.tlsPort}`, caCertificate: rsyslog.caCertificate, frames, policy: lan });
    assert.equal(result.error, null);
    assert.equal(result.delivered, true);
    assert.deepEqual(await receivedWith(tag, 3), expected);
  });

  it('checks the certificate against the host name when given one', async () => {
    const tag = randomUUID();
    const { frames, expected } = batch(tag);
    const result = await sendSyslog({ url: `syslog+tls://localhost:${rsyslog.tlsPort}`, caCertificate: rsyslog.caCertificate, frames, policy: lan });
    assert.equal(result.error, null);
    assert.deepEqual(await receivedWith(tag, 3), expected);
  });

  it('fails TLS without the CA, sending nothing', async () => {
    const tag = randomUUID();
    const result = await sendSyslog({ url: `syslog+tls://127.0.0.1:${rsyslog.tlsPort}`, caCertificate: null, frames: batch(tag).frames, policy: lan });
    assert.equal(result.delivered, false);
    assert.equal(result.responseStatus, null);
    assert.match(String(result.error), /^TLS error: .*certificate/i);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(await receivedWith(tag, 0), []);
  });

  it('fails plain TCP to a closed port as connection refused', async () => {
    const port = await freePort();
    const result = await sendSyslog({ url: `syslog+tcp://127.0.0.1:${port}`, caCertificate: null, frames: batch('x').frames, policy: lan });
    assert.deepEqual({ ...result, durationMs: 0 }, { delivered: false, responseStatus: null, error: 'connection refused', durationMs: 0 });
  });

  it('refuses loopback collectors when private addresses are not allowed', async () => {
    const tag = randomUUID();
    const strict = { allowPrivate: false };
    const literal = await sendSyslog({ url: `syslog+tcp://127.0.0.1:${rsyslog.tcpPort}`, caCertificate: null, frames: batch(tag).frames, policy: strict });
    assert.equal(literal.error, 'destination not allowed: loopback address 127.0.0.1');
    const named = await sendSyslog({ url: `syslog+tls://localhost:${rsyslog.tlsPort}`, caCertificate: rsyslog.caCertificate, frames: batch(tag).frames, policy: strict });
    assert.match(String(named.error), /^destination not allowed: loopback address/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(await receivedWith(tag, 0), []);
  });
});

describe('sendSyslog without a collector', () => {
  it('never throws, whatever the input', async () => {
    const refused = (url: string, caCertificate: string | null = null) => sendSyslog({ url, caCertificate, frames: [], policy: lan });
    assert.equal((await refused('not a url')).error, 'invalid URL');
    assert.equal((await refused('https://127.0.0.1:514')).error, 'unsupported scheme https:');
    assert.equal((await refused('syslog+tcp://127.0.0.1')).error, 'URL has no port');
    const badCa = await refused(`syslog+tls://127.0.0.1:${await freePort()}`, 'not a PEM');
    assert.equal(badCa.delivered, false);
    assert.ok(badCa.error);
  });

  it('stops at the timeout when the collector never closes', async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer({ allowHalfOpen: true }, (s) => sockets.push(s.resume())); // reads, never closes
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const result = await sendSyslog({ url: `syslog+tcp://127.0.0.1:${port}`, caCertificate: null, frames: ['3 abc'], policy: lan, timeoutMs: 300 });
      assert.equal(result.delivered, false);
      assert.equal(result.error, 'not delivered within 0.3 s');
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
