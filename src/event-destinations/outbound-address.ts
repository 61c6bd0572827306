// Where outbound deliveries may connect (API.md §9): URL rules at create/update, and the address
// guard applied again at every connection, so a name that later resolves inward (DNS rebinding)
// is still refused.
import dns from 'node:dns';
import net from 'node:net';
import { destinationNotAllowed, invalidRequest } from '../errors.js';

export interface OutboundPolicy {
  allowPrivate: boolean;
}

// Checked in order, so the more specific label wins (broadcast before the reserved 240/4).
const IPV4_RANGES: Array<[label: string, network: string, prefix: number]> = [
  ['unspecified', '0.0.0.0', 8],
  ['loopback', '127.0.0.0', 8],
  ['private', '10.0.0.0', 8],
  ['private', '172.16.0.0', 12],
  ['private', '192.168.0.0', 16],
  ['shared (CGNAT)', '100.64.0.0', 10],
  ['link-local', '169.254.0.0', 16],
  ['broadcast', '255.255.255.255', 32],
  ['multicast', '224.0.0.0', 4],
  // IETF protocol assignments, documentation, benchmarking, 6to4 relay, future use.
  ['reserved', '192.0.0.0', 24],
  ['reserved', '192.0.2.0', 24],
  ['reserved', '192.88.99.0', 24],
  ['reserved', '198.18.0.0', 15],
  ['reserved', '198.51.100.0', 24],
  ['reserved', '203.0.113.0', 24],
  ['reserved', '240.0.0.0', 4],
];

const IPV6_RANGES: Array<[label: string, network: string, prefix: number]> = [
  ['unspecified', '::', 128],
  ['loopback', '::1', 128],
  ['unique-local', 'fc00::', 7],
  ['link-local', 'fe80::', 10],
  ['site-local', 'fec0::', 10],
  ['multicast', 'ff00::', 8],
  ['private', '64:ff9b:1::', 48], // local-use NAT64
  // Within 2000::/3 (everything outside it is refused below): benchmarking, documentation.
  ['reserved', '2001:2::', 48],
  ['reserved', '2001:db8::', 32],
  ['reserved', '3fff::', 20],
];

const RULES: Array<{ label: string; list: net.BlockList }> = [];
function addRule(label: string, network: string, prefix: number, type: 'ipv4' | 'ipv6') {
  let rule = RULES.find((r) => r.label === label);
  if (!rule) RULES.push((rule = { label, list: new net.BlockList() }));
  rule.list.addSubnet(network, prefix, type);
}
for (const [label, network, prefix] of IPV4_RANGES) {
  addRule(label, network, prefix, 'ipv4');
  // IPv4-mapped and NAT64 well-known-prefix forms reach the same IPv4 host.
  addRule(label, `::ffff:${network}`, 96 + prefix, 'ipv6');
  addRule(label, `64:ff9b::${network}`, 96 + prefix, 'ipv6');
}
for (const [label, network, prefix] of IPV6_RANGES) addRule(label, network, prefix, 'ipv6');

// Public IPv6 hosts are all in global unicast 2000::/3; the rest of the space is special or unassigned.
const IPV6_DIALLABLE = new net.BlockList();
IPV6_DIALLABLE.addSubnet('2000::', 3, 'ipv6');
IPV6_DIALLABLE.addSubnet('::ffff:0:0', 96, 'ipv6');
IPV6_DIALLABLE.addSubnet('64:ff9b::', 96, 'ipv6');

export function disallowedAddressReason(ip: string): string | null {
  const address = ip.replace(/^\[(.*)\]$/, '$1').split('%')[0] ?? '';
  const family = net.isIP(address);
  if (family === 0) return `not an IP address ${ip}`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { label, list } of RULES) {
    if (list.check(address, type)) return `${label} address ${address}`;
  }
  if (type === 'ipv6' && !IPV6_DIALLABLE.check(address, 'ipv6')) return `reserved address ${address}`;
  return null;
}

const MAX_URL_LENGTH = 2048;
const LOOKUP_CAP_MS = 3000;

function badUrl(message: string) {
  return invalidRequest([{ path: 'body.url', message }]);
}

/** A URL host without IPv6 brackets, lowercased (non-special schemes keep the case as typed). */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

function isLocalhostName(host: string): boolean {
  const name = host.replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

export async function checkDestinationUrl(kind: 'webhook' | 'syslog', url: string, policy: OutboundPolicy): Promise<void> {
  if (url.length > MAX_URL_LENGTH) throw badUrl(`must be at most ${MAX_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badUrl('must be an absolute URL');
  }
  if (kind === 'webhook') {
    if (parsed.protocol === 'http:') {
      if (!policy.allowPrivate) throw destinationNotAllowed('webhook URLs must use https://');
    } else if (parsed.protocol !== 'https:') {
      throw badUrl('must be an https:// URL');
    }
  } else {
    if (parsed.protocol !== 'syslog+tls:' && parsed.protocol !== 'syslog+tcp:') {
      throw badUrl('must be a syslog+tls:// or syslog+tcp:// URL');
    }
    if (parsed.port === '' || parsed.port === '0') throw badUrl('must give a port (syslog+tls://host:6514)');
    if ((parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search !== '' || parsed.hash !== '') {
      throw badUrl('must not have a path, query or fragment');
    }
  }
  if (parsed.username !== '' || parsed.password !== '') throw badUrl('must not contain credentials');
  const host = bareHost(parsed);
  if (host === '') throw badUrl('must name a host');
  if (policy.allowPrivate) return;

  if (isLocalhostName(host)) throw destinationNotAllowed(`${host} is a loopback name`);
  if (net.isIP(host)) {
    const reason = disallowedAddressReason(host);
    if (reason) throw destinationNotAllowed(reason);
    return;
  }
  const addresses = await lookupAllCapped(host);
  for (const { address } of addresses) {
    const reason = disallowedAddressReason(address);
    if (reason) throw destinationNotAllowed(`${host} resolves to a ${reason}`);
  }
}

/** Every address of a name, or none when it does not resolve in time: the sender checks again. */
async function lookupAllCapped(host: string): Promise<dns.LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<dns.LookupAddress[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_CAP_MS);
    timer.unref();
  });
  try {
    return await Promise.race([dns.promises.lookup(host, { all: true, verbatim: true }).catch(() => []), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class DestinationNotAllowedError extends Error {
  readonly code = 'EDESTINATIONNOTALLOWED';
  constructor(reason: string) {
    super(`destination not allowed: ${reason}`);
    this.name = 'DestinationNotAllowedError';
  }
}

/** The connection-time check for hosts given as IP literals, which never reach `lookup`. */
export function literalHostRefusal(host: string, policy: OutboundPolicy): DestinationNotAllowedError | null {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (policy.allowPrivate || !net.isIP(bare)) return null;
  const reason = disallowedAddressReason(bare);
  return reason ? new DestinationNotAllowedError(reason) : null;
}

export function guardedLookup(policy: OutboundPolicy): (hostname: string, options: object, callback: (...args: any[]) => void) => void {
  return (hostname, options, callback) => {
    dns.lookup(hostname, options as dns.LookupOptions, (err, result, family) => {
      if (err) return callback(err);
      if (!policy.allowPrivate) {
        const addresses = Array.isArray(result) ? result.map((a) => a.address) : [result];
        for (const address of addresses) {
          const reason = disallowedAddressReason(address);
          if (reason) return callback(new DestinationNotAllowedError(reason));
        }
      }
      // net asks with all: true (autoSelectFamily) and then expects the array form.
      return Array.isArray(result) ? callback(null, result) : callback(null, result, family);
    });
  };
}

/** A short, secret-free description of a failed connection, for a delivery's `error`. */
export function describeConnectionError(err: unknown): string {
  if (err instanceof DestinationNotAllowedError) return err.message;
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection closed before the response ended';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NODATA':
      return 'host name does not resolve';
    case 'EHOSTUNREACH':
      return 'host unreachable';
    case 'ENETUNREACH':
      return 'network unreachable';
    case 'ETIMEDOUT':
      return 'connection timed out';
  }
  if (/socket hang up/i.test(message)) return 'connection closed before the response ended';
  // Certificate and handshake failures: node's messages name no secret, only the problem.
  if (/cert|tls|ssl|altname/i.test(`${code} ${message}`)) return `TLS error: ${message}`.slice(0, 200);
  return (code ? `connection failed (${code})` : message).slice(0, 200);
}
