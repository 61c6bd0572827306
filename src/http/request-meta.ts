// What audit entries record of a request: the client's IP address (the socket's, unless
// TRUST_PROXY_HEADERS says a proxy in front of us sets the headers: SPEC "Events": CDN client-IP
// header, then x-forwarded-for, then x-real-ip) and its user agent; and the request's logger, for
// services that log on its behalf. Computed once per request (`request.meta`), so route factories
// need not know the proxy setting.
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const CLIENT_IP_HEADERS = ['cf-connecting-ip', 'true-client-ip', 'x-client-ip'];

function normalise(ip: string | undefined): string | null {
  if (!ip) return null;
  let candidate = ip.trim();
  if (candidate.startsWith('::ffff:') && isIP(candidate.slice(7)) === 4) candidate = candidate.slice(7);
  return isIP(candidate) ? candidate : null;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function clientIp(request: FastifyRequest, trustProxyHeaders: boolean): string | null {
  if (trustProxyHeaders) {
    for (const name of CLIENT_IP_HEADERS) {
      const ip = normalise(header(request, name));
      if (ip) return ip;
    }
    const forwarded = normalise(header(request, 'x-forwarded-for')?.split(',')[0]);
    if (forwarded) return forwarded;
    const real = normalise(header(request, 'x-real-ip'));
    if (real) return real;
  }
  return normalise(request.socket.remoteAddress);
}

/** What a service logs on a request's behalf through (pino's signature, the fields first). */
export interface RequestLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
  /**
   * The request's logger: a line a service writes on the request's behalf (a mail that failed, a
   * provider that did not answer) carries the request's requestId, like the access-log line.
   */
  log: RequestLog;
}

/** The client's IP and user agent, as audit entries record them, and the request's logger. */
export function requestMeta(request: FastifyRequest, trustProxyHeaders: boolean): RequestMeta {
  return { ip: clientIp(request, trustProxyHeaders), userAgent: request.headers['user-agent'] ?? null, log: request.log };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The client's IP and user agent, worked out on first use and kept for the request. */
    readonly meta: RequestMeta;
  }
}

const META = Symbol('requestMeta');

export function installRequestMeta(app: FastifyInstance, trustProxyHeaders: boolean): void {
  // A getter, not a hook: most requests (reads, API-key lookups) never record an audit entry, so
  // they never pay for parsing the address.
  // Declared up front so every request object keeps one shape.
  app.decorateRequest(META as unknown as string, null);
  app.decorateRequest('meta', {
    getter(this: FastifyRequest) {
      const request = this as FastifyRequest & { [META]: RequestMeta | null };
      return (request[META] ??= requestMeta(this, trustProxyHeaders));
    },
  });
}
