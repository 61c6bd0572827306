// Syslog delivery (API.md §9): RFC 5424 messages, RFC 6587 octet-counting framing, over TCP or
// TLS (RFC 5425). One connection per batch; the batch counts as delivered only when the collector
// closed it cleanly after reading everything.
import net from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { describeConnectionError, guardedLookup, literalHostRefusal, type OutboundPolicy } from './outbound-address.js';
import type { DeliveryResult } from './webhook-transport.js';

const FACILITY_LOG_AUDIT = 13;
const SEVERITY = { success: 6, denied: 5, failure: 4 } as const; // informational, notice, warning
const DEFAULT_TIMEOUT_MS = 10_000;

// RFC 5424 §6.2.3: full-date "T" full-time, at most six fraction digits, Z or a numeric offset.
const RFC5424_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/** PRINTUSASCII (33..126) only, at most `max` characters, else the NILVALUE. */
function printableField(value: string, max: number): string {
  const cut = value.slice(0, max);
  return /^[\x21-\x7e]+$/.test(cut) ? cut : '-';
}

function timestampField(timestamp: string): string {
  if (RFC5424_TIMESTAMP.test(timestamp)) return timestamp;
  const parsed = new Date(timestamp);
  return Number.isNaN(parsed.getTime()) ? '-' : parsed.toISOString();
}

function hostnameField(): string {
  const name = os.hostname().replace(/[^\x21-\x7e]/g, '').slice(0, 255);
  return name === '' ? '-' : name;
}

export function syslogFrame(opts: { timestamp: string; msgId: string; msg: string; result: 'success' | 'failure' | 'denied' }): string {
  const pri = FACILITY_LOG_AUDIT * 8 + SEVERITY[opts.result];
  const message = `<${pri}>1 ${timestampField(opts.timestamp)} ${hostnameField()} dms - ${printableField(opts.msgId, 32)} - ${opts.msg}`;
  return `${Buffer.byteLength(message, 'utf8')} ${message}`;
}

function parseSyslogUrl(raw: string): { secure: boolean; host: string; port: number } | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'invalid URL';
  }
  if (url.protocol !== 'syslog+tcp:' && url.protocol !== 'syslog+tls:') return `unsupported scheme ${url.protocol}`;
  const port = Number(url.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return 'URL has no port';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') return 'URL has no host';
  return { secure: url.protocol === 'syslog+tls:', host, port };
}

export async function sendSyslog(opts: {
  url: string;
  caCertificate: string | null;
  frames: string[];
  policy: OutboundPolicy;
  timeoutMs?: number;
}): Promise<DeliveryResult> {
  const started = performance.now();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = (delivered: boolean, error: string | null): DeliveryResult => ({
    delivered,
    responseStatus: null,
    error,
    durationMs: Math.round(performance.now() - started),
  });

  const target = parseSyslogUrl(opts.url);
  if (typeof target === 'string') return result(false, target);
  const refusal = literalHostRefusal(target.host, opts.policy);
  if (refusal) return result(false, refusal.message);

  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    let socket: net.Socket | undefined;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      resolve(result(error === null, error));
    };
    const timer = setTimeout(() => finish(`not delivered within ${timeoutMs / 1000} s`), timeoutMs);

    const lookup = guardedLookup(opts.policy);
    try {
      socket = target.secure
        ? tls.connect({
            host: target.host,
            port: target.port,
            lookup,
            // SNI must be a name (RFC 6066); for an IP literal node verifies against the IP SANs.
            ...(net.isIP(target.host) ? {} : { servername: target.host }),
            ...(opts.caCertificate ? { ca: [...tls.rootCertificates, opts.caCertificate] } : {}),
            rejectUnauthorized: true,
          })
        : net.connect({ host: target.host, port: target.port, lookup });
    } catch (err) {
      return finish(describeConnectionError(err)); // e.g. an unparsable caCertificate
    }

    let flushed = false;
    socket.on('error', (err) => finish(describeConnectionError(err)));
    socket.on('close', (hadError) => {
      if (hadError) return; // 'error' already said why
      finish(flushed ? null : 'connection closed before every message was sent');
    });
    socket.resume(); // a collector sends nothing, but 'end' and 'close' only come to a flowing socket
    for (const frame of opts.frames) socket.write(frame);
    // 'finish': every write was handed to the kernel; then the collector's close completes it.
    socket.on('finish', () => {
      flushed = true;
    });
    socket.end();
  });
}
