// One error type, one catalogue (API.md §2). Every error leaves the service as RFC 9457
// problem details built from an AppError; nothing else is ever sent to a client.

export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, title: 'Bad Request' },
  EMPTY_UPDATE: { status: 400, title: 'Bad Request' },
  DESTINATION_NOT_ALLOWED: { status: 400, title: 'Bad Request' },
  TOKEN_INVALID: { status: 400, title: 'Bad Request' },
  SSO_CONFIG_INVALID: { status: 400, title: 'Bad Request' },
  UNAUTHENTICATED: { status: 401, title: 'Unauthorized' },
  API_KEY_INVALID: { status: 401, title: 'Unauthorized' },
  API_KEY_INACTIVE: { status: 401, title: 'Unauthorized' },
  MFA_INVALID: { status: 401, title: 'Unauthorized' },
  ENROLLMENT_KEY_INVALID: { status: 401, title: 'Unauthorized' },
  ENROLLMENT_KEY_EXPIRED: { status: 401, title: 'Unauthorized' },
  ENROLLMENT_KEY_EXHAUSTED: { status: 401, title: 'Unauthorized' },
  SSO_FAILED: { status: 401, title: 'Unauthorized' },
  SSO_REQUIRED: { status: 401, title: 'Unauthorized' },
  MFA_REQUIRED: { status: 403, title: 'Forbidden' },
  PERMISSION_DENIED: { status: 403, title: 'Forbidden' },
  API_KEY_SCOPE_DENIED: { status: 403, title: 'Forbidden' },
  PARTNER_INACTIVE: { status: 403, title: 'Forbidden' },
  ORG_SUSPENDED: { status: 403, title: 'Forbidden' },
  PARTNER_MISMATCH: { status: 403, title: 'Forbidden' },
  ACCOUNT_MISCONFIGURED: { status: 403, title: 'Forbidden' },
  ACCOUNT_DISABLED: { status: 403, title: 'Forbidden' },
  ORG_ACCESS_DENIED: { status: 403, title: 'Forbidden' },
  SITE_ACCESS_DENIED: { status: 403, title: 'Forbidden' },
  ENROLLMENT_KEY_ORG_MISMATCH: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not Found' },
  CONFLICT: { status: 409, title: 'Conflict' },
  API_KEY_NOT_ACTIVE: { status: 409, title: 'Conflict' },
  LIMIT_REACHED: { status: 409, title: 'Conflict' },
  DEVICE_OFFLINE: { status: 409, title: 'Conflict' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request Timeout' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type' },
  UPGRADE_REQUIRED: { status: 426, title: 'Upgrade Required' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request Header Fields Too Large' },
  INTERNAL: { status: 500, title: 'Internal Server Error' },
  AGENT_ERROR: { status: 502, title: 'Bad Gateway' },
  AGENT_BAD_REPLY: { status: 502, title: 'Bad Gateway' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service Unavailable' },
  AGENT_TIMEOUT: { status: 504, title: 'Gateway Timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldError {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, detail: string, options: AppErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.title = ERROR_CATALOGUE[code].title;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export interface ProblemBody {
  type: 'about:blank';
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  requestId: string;
  errors?: FieldError[];
}

export function toProblem(error: AppError, requestId: string): ProblemBody {
  const body: ProblemBody = {
    type: 'about:blank',
    title: error.title,
    status: error.status,
    code: error.code,
    detail: error.message,
    requestId,
  };
  if (error.errors) body.errors = error.errors;
  // API.md §2: validation errors carry `errors`. A rule no single field breaks (two fields that
  // contradict each other, a value the caller's scope rules out) names the request as a whole.
  else if (error.code === 'VALIDATION_FAILED') body.errors = [{ path: 'request', message: error.message }];
  return body;
}

// Named constructors for the errors thrown in more than one place, and for SPEC's fixed messages
// (marked), so each message is written once; clients and tests compare `detail` to the letter.

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);

// Validation
/** Fastify's schema failures and the services' own field checks share this summary form. */
export function invalidRequest(errors: FieldError[]): AppError {
  return new AppError('VALIDATION_FAILED', `Invalid request: ${errors.map((f) => `${f.path} ${f.message}`).join('; ')}`, { errors });
}
export const reversedRange = (start: string, end: string, errors?: FieldError[]) =>
  new AppError('VALIDATION_FAILED', `${start} must not be later than ${end}`, { errors });
/** A site named for a device or enrollment key must be one of that owner's organization. */
export const siteOutsideOrg = (owner: 'device' | 'key') =>
  new AppError('VALIDATION_FAILED', `siteId must be a site of the ${owner}’s organization`, {
    errors: [{ path: 'body.siteId', message: 'not a site of this organization' }],
  });
/** `fields` says what the PATCH accepts, e.g. 'name, scopes or rateLimit'. */
export const emptyUpdate = (fields: string) => new AppError('EMPTY_UPDATE', `Nothing to update: send ${fields}`);

// Authentication
/** A disabled user's sign-in, told only to whoever proved the password (or came through its identity provider). */
export const accountDisabled = () => new AppError('ACCOUNT_DISABLED', 'This account is disabled; ask an administrator to enable it');
export const accessTokenInvalid = () => new AppError('UNAUTHENTICATED', 'Access token is invalid or expired');
export const mfaTokenInvalid = () => new AppError('UNAUTHENTICATED', 'MFA token is invalid or expired; sign in again');
export const mfaCodeInvalid = () => new AppError('MFA_INVALID', 'The authentication code is wrong or expired');
/** SPEC's message. */
export const apiKeyInactive = () => new AppError('API_KEY_INACTIVE', 'key no longer active; create a new key or rotate an active one');
export const enrollmentKeyInvalid = () => new AppError('ENROLLMENT_KEY_INVALID', 'Enrollment key is not valid');

// Reach
export const permissionDenied = (detail: string) => new AppError('PERMISSION_DENIED', detail);
/** SPEC's message. */
export const orgDenied = () => new AppError('ORG_ACCESS_DENIED', 'Access to this organization denied');
/** SPEC's message. */
export const siteDenied = () => new AppError('SITE_ACCESS_DENIED', 'Access to this site denied');
export const partnerMismatch = () => new AppError('PARTNER_MISMATCH', 'partnerId must be your own partner');
/** An organization-scope account whose organization is missing (API.md §2). */
export const accountWithoutOrg = () => new AppError('ACCOUNT_MISCONFIGURED', 'This account has no organization: ask an administrator to fix it');
/** An organization-scope account whose organization was deleted: no valid orgId in its context (API.md §2). */
export const accountOfDeletedOrg = () => new AppError('ACCOUNT_MISCONFIGURED', 'This account’s organization has been deleted: ask an administrator to fix it');
export const accountWithoutPartner = () => new AppError('ACCOUNT_MISCONFIGURED', 'This account has no partner');

// Conflicts (duplicates of a unique column come from db/unique-conflicts.ts)
export const limitReached = (owner: 'partner' | 'organization', cap: number, what: 'organizations' | 'devices') =>
  new AppError('LIMIT_REACHED', `This ${owner} has reached its limit of ${cap} ${what}`);

// Outbound delivery (API.md §9)
/** `detail` says why, e.g. 'host resolves to a private address (10.0.0.5)'; never a secret. */
export const destinationNotAllowed = (detail: string) => new AppError('DESTINATION_NOT_ALLOWED', `Destination not allowed: ${detail}`);

// Devices and the database
export const agentTimeout = (timeoutMs: number) =>
  new AppError('AGENT_TIMEOUT', `The device did not answer within ${Math.round(timeoutMs / 1000)} seconds`);
/** A client retrying after Retry-After finds the pool reconnected: a restart of PostgreSQL takes seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
export const databaseUnavailable = (cause: unknown) =>
  new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly', {
    cause, headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
/** Freeing space takes an operator, not a reconnect. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 60;
export const storageFull = (cause: unknown) =>
  new AppError('SERVICE_UNAVAILABLE', 'Storage is full: the change was not saved. Reads still work; try again once space has been freed', {
    cause, headers: { 'retry-after': String(STORAGE_FULL_RETRY_AFTER_SECONDS) },
  });
