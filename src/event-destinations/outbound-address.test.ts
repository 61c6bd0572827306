// Which addresses outbound deliveries may dial: the address table, the URL rules at create/update,
// and the connection-time guard against names that resolve inward.
import assert from 'node:assert/strict';
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../errors.js';
import { checkDestinationUrl, disallowedAddressReason, guardedLookup } from './outbound-address.js';

const strict = { allowPrivate: false };
const lan = { allowPrivate: true };

describe('disallowedAddressReason', () => {
  it('refuses every non-public IPv4 range, naming why', () => {
    const refused: Array<[string, string]> = [
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'shared (CGNAT)'],
      ['100.127.255.255', 'shared (CGNAT)'],
      ['169.254.169.254', 'link-local'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.0.8', 'reserved'],
      ['192.0.2.1', 'reserved'],
      ['198.18.0.1', 'reserved'],
      ['198.51.100.7', 'reserved'],
      ['203.0.113.9', 'reserved'],
    ];
    for (const [ip, label] of refused) assert.equal(disallowedAddressReason(ip), `${label} address ${ip}`, ip);
  });

  it('lets public IPv4 addresses through, up to the edges of the refused ranges', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '9.255.255.255', '11.0.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0',
      '100.63.255.255', '100.128.0.0', '169.253.255.255', '198.20.0.0', '223.255.255.255', '126.255.255.255', '128.0.0.0']) {
      assert.equal(disallowedAddressReason(ip), null, ip);
    }
  });

  it('refuses non-public IPv6, including IPv4-mapped and NAT64 forms of refused IPv4', () => {
    const refused: Array<[string, string]> = [
      ['::', 'unspecified address ::'],
      ['::1', 'loopback address ::1'],
      ['fe80::1', 'link-local address fe80::1'],
      ['fe80::1%eth0', 'link-local address fe80::1'],
      ['[fe80::abcd]', 'link-local address fe80::abcd'],
      ['febf:ffff::1', 'link-local address febf:ffff::1'],
      ['fec0::1', 'site-local address fec0::1'],
      ['fc00::1', 'unique-local address fc00::1'],
      ['fd12:3456:789a::1', 'unique-local address fd12:3456:789a::1'],
      ['ff02::1', 'multicast address ff02::1'],
      ['::ffff:127.0.0.1', 'loopback address ::ffff:127.0.0.1'],
      ['::ffff:7f00:1', 'loopback address ::ffff:7f00:1'],
      ['::ffff:10.0.0.1', 'private address ::ffff:10.0.0.1'],
      ['::ffff:a9fe:a9fe', 'link-local address ::ffff:a9fe:a9fe'],
      ['::ffff:0.0.0.0', 'unspecified address ::ffff:0.0.0.0'],
      ['64:ff9b::192.168.0.1', 'private address 64:ff9b::192.168.0.1'],
      ['64:ff9b:1::1', 'private address 64:ff9b:1::1'],
      ['::127.0.0.1', 'reserved address ::127.0.0.1'],
      ['2001:db8::1', 'reserved address 2001:db8::1'],
      ['100::1', 'reserved address 100::1'],
      ['fbff::1', 'reserved address fbff::1'],
      ['fe00::1', 'reserved address fe00::1'],
      ['4000::1', 'reserved address 4000::1'],
    ];
    for (const [ip, reason] of refused) assert.equal(disallowedAddressReason(ip), reason, ip);
  });

  it('lets public IPv6 through, mapped public IPv4 included', () => {
    for (const ip of ['2606:4700:4700::1111', '2a00:1450:4001:81c::200e', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '3ffe::1']) {
      assert.equal(disallowedAddressReason(ip), null, ip);
    }
  });

  it('refuses what is not an IP address at all', () => {
    assert.equal(disallowedAddressReason('example.com'), 'not an IP address example.com');
    assert.equal(disallowedAddressReason(''), 'not an IP address ');
  });
});

/** 'ok', or the error code and, for validation errors, the field. */
async function outcome(kind: 'webhook' | 'syslog', url: string, policy = strict): Promise<string> {
  try {
    await checkDestinationUrl(kind, url, policy);
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof AppError, `not an AppError: ${String(err)}`);
    return err.code === 'VALIDATION_FAILED' ? `${err.code} ${err.errors?.[0]?.path}` : err.code;
  }
}
const INVALID = 'VALIDATION_FAILED body.url';
const REFUSED = 'DESTINATION_NOT_ALLOWED';

describe('checkDestinationUrl', () => {
  it('takes https webhooks, and http ones only where private addresses are allowed', async () => {
    assert.equal(await outcome('webhook', 'https://8.8.8.8/hooks/audit?token=x'), 'ok');
    assert.equal(await outcome('webhook', 'https://[2606:4700:4700::1111]:8443/'), 'ok');
    assert.equal(await outcome('webhook', 'http://8.8.8.8/hook'), REFUSED);
    assert.equal(await outcome('webhook', 'http://8.8.8.8/hook', lan), 'ok');
  });

  it('rejects malformed webhook URLs as validation errors on body.url', async () => {
    assert.equal(await outcome('webhook', 'not a url'), INVALID);
    assert.equal(await outcome('webhook', '/relative/path'), INVALID);
    assert.equal(await outcome('webhook', 'ftp://8.8.8.8/'), INVALID);
    assert.equal(await outcome('webhook', 'syslog+tls://8.8.8.8:6514'), INVALID);
    assert.equal(await outcome('webhook', 'https://user:secret@8.8.8.8/'), INVALID);
    assert.equal(await outcome('webhook', 'https://token@8.8.8.8/'), INVALID);
    assert.equal(await outcome('webhook', `https://8.8.8.8/${'a'.repeat(2048)}`), INVALID);
    assert.equal(await outcome('webhook', `https://8.8.8.8/${'a'.repeat(2048 - 'https://8.8.8.8/'.length)}`), 'ok', 'exactly 2048 is fine');
  });

  it('refuses webhook hosts that are, or normalise to, refused addresses', async () => {
    for (const url of ['https://127.0.0.1/', 'https://10.0.0.5:8443/x', 'https://[::1]/', 'https://[::ffff:127.0.0.1]/', 'https://0x7f.1/',
      'https://2130706433/', 'https://169.254.169.254/latest/meta-data', 'https://[fe80::1]/', 'https://localhost:8443/', 'https://LOCALHOST./',
      'https://api.localhost/']) {
      assert.equal(await outcome('webhook', url), REFUSED, url);
      assert.equal(await outcome('webhook', url, lan), 'ok', url);
    }
  });

  it('takes syslog+tls and syslog+tcp with a port, and nothing else', async () => {
    assert.equal(await outcome('syslog', 'syslog+tls://8.8.8.8:6514'), 'ok');
    assert.equal(await outcome('syslog', 'syslog+tcp://8.8.8.8:514'), 'ok');
    assert.equal(await outcome('syslog', 'syslog+tls://[2606:4700:4700::1111]:6514'), 'ok');
    assert.equal(await outcome('syslog', 'syslog+tls://8.8.8.8:6514/'), 'ok', 'an empty path is no path');
    for (const url of ['syslog+tls://8.8.8.8', 'syslog+tls://8.8.8.8:0', 'syslog+tls://8.8.8.8:70000', 'syslog+tls://8.8.8.8:6514/audit',
      'syslog+tls://8.8.8.8:6514?x=1', 'syslog+tls://8.8.8.8:6514#x', 'syslog://8.8.8.8:514', 'syslog+udp://8.8.8.8:514', 'https://8.8.8.8/',
      'syslog+tcp://user:pw@8.8.8.8:514', 'syslog+tcp://:514', 'syslog+tcp:8.8.8.8:514', 'not a url']) {
      assert.equal(await outcome('syslog', url), INVALID, url);
    }
  });

  it('refuses syslog hosts at refused addresses unless private addresses are allowed', async () => {
    for (const url of ['syslog+tcp://10.0.0.5:514', 'syslog+tls://127.0.0.1:6514', 'syslog+tcp://[fe80::1]:514', 'syslog+tcp://LocalHost:514',
      'syslog+tcp://[::ffff:a00:5]:514']) {
      assert.equal(await outcome('syslog', url), REFUSED, url);
      assert.equal(await outcome('syslog', url, lan), 'ok', url);
    }
  });

  it('says which address a refused name resolves to, through the resolver', async (t) => {
    // This machine's own name usually resolves to a loopback or private address (/etc/hosts).
    const name = os.hostname().toLowerCase();
    const addresses = await dns.promises.lookup(name, { all: true }).catch(() => []);
    const reason = addresses.map((a) => disallowedAddressReason(a.address)).find(Boolean);
    if (!reason || name === 'localhost') return t.skip(`${name} resolves to no refused address here`);
    await assert.rejects(checkDestinationUrl('syslog', `syslog+tcp://${name}:514`, strict), (err: AppError) => {
      assert.equal(err.code, REFUSED);
      assert.match(err.message, new RegExp(`${name} resolves to a .* address`));
      return true;
    });
    assert.equal(await outcome('webhook', `https://${name}/`, lan), 'ok');
  });

  it('accepts a name that does not resolve: the sender checks again at every connection', async () => {
    assert.equal(await outcome('webhook', 'https://no-such-host.invalid/hook'), 'ok');
    assert.equal(await outcome('syslog', 'syslog+tls://no-such-host.invalid:6514'), 'ok');
  });
});

describe('guardedLookup', () => {
  let server: http.Server;
  let port: number;
  let connections = 0;

  before(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  function get(policy: { allowPrivate: boolean }): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = http.get({ host: 'localhost', port, agent: false, family: 4, lookup: guardedLookup(policy) }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
  }

  it('fails the connection when the name resolves to loopback, before any connection is made', async () => {
    const before = connections;
    await assert.rejects(get(strict), (err: Error) => err.message === 'destination not allowed: loopback address 127.0.0.1');
    assert.equal(connections, before);
  });

  it('resolves normally when private addresses are allowed', async () => {
    assert.equal(await get(lan), 200);
  });

  it('answers in both shapes net asks for: one address, or all of them', async () => {
    const one = await new Promise<unknown[]>((resolve) => guardedLookup(lan)('localhost', { family: 4 }, (...args) => resolve(args)));
    assert.deepEqual(one, [null, '127.0.0.1', 4]);
    const all = await new Promise<unknown[]>((resolve) => guardedLookup(lan)('localhost', { family: 4, all: true }, (...args) => resolve(args)));
    assert.deepEqual(all, [null, [{ address: '127.0.0.1', family: 4 }]]);
    const refused = await new Promise<unknown[]>((resolve) => guardedLookup(strict)('localhost', { all: true }, (...args) => resolve(args)));
    assert.match(String(refused[0]), /destination not allowed: loopback address/);
    const missing = await new Promise<unknown[]>((resolve) => guardedLookup(strict)('no-such-host.invalid', {}, (...args) => resolve(args)));
    assert.match(String((missing[0] as NodeJS.ErrnoException).code), /^(ENOTFOUND|EAI_AGAIN)$/);
  });
});
