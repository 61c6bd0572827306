// The console's only way to the API: an openapi-fetch client typed from the service's own OpenAPI
// document (schema.d.ts, generated at build). It adds the access token, refreshes an expired one once
// and retries, and turns every failure into an ApiError with the server's problem detail.
import createClient from 'openapi-fetch';
import type { paths } from './schema';

export interface FieldError { path: string; message: string }

/** A refused or failed request, as the user should read it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }

  /**
   * The message for a request body property (`name`, `address`…) if the server named it, or named
   * something inside it (`body.address.city`, `/body/scopes/0`).
   */
  forField(field: string): string | undefined {
    const exact = [`body.${field}`, `/body/${field}`, `body/${field}`, `/${field}`, field];
    return this.fieldErrors.find((e) => exact.includes(e.path) || e.path.startsWith(`body.${field}.`) || e.path.startsWith(`/body/${field}/`))?.message;
  }
}

export interface TokenSource {
  accessToken(): string | null;
  /** Gets a new access token after a 401; false when the session cannot be renewed. */
  renew(): Promise<boolean>;
}

let tokens: TokenSource = { accessToken: () => null, renew: async () => false };
export function setTokenSource(source: TokenSource): void {
  tokens = source;
}

/**
 * Routes whose 401 means wrong credentials in the body, not an expired access token: never renewed
 * and retried. Every other route under /auth (me, sessions, recovery codes, password change, the
 * SSO provider check) is a signed-in call like any other.
 */
const CREDENTIAL_ROUTES = new Set(['login', 'mfa/verify', 'refresh', 'logout', 'register', 'sso/discover', 'sso/exchange', 'invitations/accept', 'password/forgot', 'password/reset']
  .map((route) => `/api/v1/auth/${route}`));

async function authorisedFetch(request: Request): Promise<Response> {
  const retry = request.clone();
  const token = tokens.accessToken();
  if (token) request.headers.set('Authorization', `Bearer ${token}`);
  const response = await fetch(request);
  if (response.status !== 401 || !token || CREDENTIAL_ROUTES.has(new URL(request.url).pathname)) return response;
  if (!(await tokens.renew())) return response;
  retry.headers.set('Authorization', `Bearer ${tokens.accessToken()}`);
  return fetch(retry);
}

export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: authorisedFetch });

interface Problem { code?: string; detail?: string; title?: string; errors?: FieldError[] }

export function toApiError(response: Response | undefined, body: unknown): ApiError {
  if (!response) return new ApiError(0, 'NETWORK', 'Cannot reach the server. Check your connection and try again.');
  const problem = (typeof body === 'object' && body !== null ? body : {}) as Problem;
  const retryAfter = Number(response.headers.get('Retry-After'));
  const retryAfterSeconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null;
  let message = problem.detail ?? problem.title ?? `The server answered ${response.status}`;
  if (response.status === 429) message = `${message}${retryAfterSeconds ? ` Try again in ${formatWait(retryAfterSeconds)}.` : ''}`;
  if (response.status >= 500 && !problem.detail) message = 'The server failed to handle this request. Try again in a moment.';
  return new ApiError(response.status, problem.code ?? `HTTP_${response.status}`, message, problem.errors ?? [], retryAfterSeconds);
}

function formatWait(seconds: number): string {
  return seconds < 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

/**
 * Awaits an api call and returns its data, or throws an ApiError (also for a lost connection).
 * Usage: `const org = await call(api.GET('/api/v1/orgs/organizations/{id}', { params: { path: { id } } }))`.
 */
export async function call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await request;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw toApiError(undefined, undefined);
  }
  if (!result.response.ok) throw toApiError(result.response, result.error);
  return result.data as T;
}

/** A URL the browser downloads itself (export files): the token travels as a header, so fetch it. */
export async function download(path: string, query: Record<string, string>, filename: string): Promise<void> {
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(query)) if (v !== '') url.searchParams.set(k, v);
  let response: Response;
  try {
    response = await authorisedFetch(new Request(url));
  } catch {
    throw toApiError(undefined, undefined);
  }
  if (!response.ok) throw toApiError(response, await response.json().catch(() => undefined));
  const blob = await response.blob();
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}
