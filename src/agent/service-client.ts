// HTTP calls from the agent to the service (API.md §6, SPEC "Agent submissions"). Failures become a
// ServiceError carrying the problem+json `code` and `detail` (API.md §2), or status 0 when the
// service could not be reached at all.
import type { DiagnosticEntry } from './diagnostic-log.js';

export interface Identity {
  agentId: string;
  deviceId: string;
  authToken: string;
  orgId: string;
  siteId: string;
}

export interface EnrollRequest {
  enrollmentKey: string;
  hostname: string;
  osType: 'windows' | 'macos' | 'linux';
  osVersion: string;
  architecture: string;
  agentVersion: string;
}

export interface HeartbeatReply {
  ok: true;
  serverTime: string;
  heartbeatIntervalSeconds?: number;
}

export class ServiceError extends Error {
  constructor(
    /** HTTP status; 0 when no response arrived (network error, timeout). */
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(status === 0 ? detail : `${status} ${code}: ${detail}`);
    this.name = 'ServiceError';
  }
}

const REQUEST_TIMEOUT_MS = 15_000;

/** `http://host:port[/prefix]` → the base every path is appended to (no trailing slash, no /api/v1). */
export function normaliseServerUrl(server: string): URL {
  const url = new URL(server);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--server must be an http:// or https:// URL, got ${server}`);
  url.pathname = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  url.search = '';
  url.hash = '';
  return url;
}

/** The agent's WebSocket URL: same host, ws(s) scheme. */
export function websocketUrl(server: URL, agentId: string): string {
  const url = new URL(server.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/v1/agents/${encodeURIComponent(agentId)}/ws`;
  return url.href;
}

export function createServiceClient(server: URL, userAgent: string) {
  const endpoint = (path: string) => `${server.href.replace(/\/+$/, '')}/api/v1${path}`;

  async function post<T>(path: string, body: unknown, token?: string): Promise<T> {
    let response: Response;
    try {
      response = await fetch(endpoint(path), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': userAgent,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new ServiceError(0, 'UNREACHABLE', `cannot reach ${server.origin}: ${describeFetchError(err)}`);
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) throw problemOf(response.status, response.statusText, text);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ServiceError(response.status, 'BAD_RESPONSE', `the service answered ${response.status} with a body that is not JSON`);
    }
  }

  return {
    async enroll(request: EnrollRequest): Promise<Identity> {
      const reply = await post<Partial<Identity>>('/agents/enroll', request);
      const fields = ['agentId', 'deviceId', 'authToken', 'orgId', 'siteId'] as const;
      for (const field of fields) {
        if (typeof reply[field] !== 'string') throw new ServiceError(201, 'BAD_RESPONSE', `the enrollment reply has no ${field}`);
      }
      return { agentId: reply.agentId!, deviceId: reply.deviceId!, authToken: reply.authToken!, orgId: reply.orgId!, siteId: reply.siteId! };
    },

    heartbeat(identity: Identity, body: { agentVersion: string; metrics?: Record<string, unknown> }): Promise<HeartbeatReply> {
      return post<HeartbeatReply>(`/agents/${encodeURIComponent(identity.agentId)}/heartbeat`, body, identity.authToken);
    },

    submitLogs(identity: Identity, logs: DiagnosticEntry[]): Promise<{ received: number }> {
      return post<{ received: number }>(`/agents/${encodeURIComponent(identity.agentId)}/logs`, { logs }, identity.authToken);
    },
  };
}

export type ServiceClient = ReturnType<typeof createServiceClient>;

function problemOf(status: number, statusText: string, text: string): ServiceError {
  try {
    const body = JSON.parse(text) as { code?: unknown; detail?: unknown; title?: unknown };
    const code = typeof body.code === 'string' ? body.code : `HTTP_${status}`;
    const detail = typeof body.detail === 'string' ? body.detail : typeof body.title === 'string' ? body.title : statusText;
    return new ServiceError(status, code, detail);
  } catch {
    return new ServiceError(status, `HTTP_${status}`, statusText || 'request failed');
  }
}

/** fetch hides the useful part (ECONNREFUSED, ENOTFOUND…) in `cause`. */
function describeFetchError(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
