// One error type, one catalogue (API.md §2). Every error leaves the service as RFC 9457
// problem details built from an AppError; nothing else is ever sent to a client.

export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, title: 'Bad Request' },
  EMPTY_UPDATE: { status: 400, title: 'Bad Request' },
  UNAUTHENTICATED: { status: 401, title: 'Unauthorized' },
  API_KEY_INVALID: { status: 401, title: 'Unauthorized' },
  API_KEY_INACTIVE: { status: 401, title: 'Unauthorized' },
  MFA_INVALID: { status: 401, title: 'Unauthorized' },
  ENROLLMENT_KEY_INVALID: { status: 401, title: 'Unauthorized' },
  ENROLLMENT_KEY_EXPIRED: { status: 401, title: 'Unauthorized' },
  ENROLLMENT_KEY_EXHAUSTED: { status: 401, title: 'Unauthorized' },
  MFA_REQUIRED: { status: 403, title: 'Forbidden' },
  PERMISSION_DENIED: { status: 403, title: 'Forbidden' },
  API_KEY_SCOPE_DENIED: { status: 403, title: 'Forbidden' },
  PARTNER_INACTIVE: { status: 403, title: 'Forbidden' },
  ORG_SUSPENDED: { status: 403, title: 'Forbidden' },
  PARTNER_MISMATCH: { status: 403, title: 'Forbidden' },
  ACCOUNT_MISCONFIGURED: { status: 403, title: 'Forbidden' },
  ORG_ACCESS_DENIED: { status: 403, title: 'Forbidden' },
  SITE_ACCESS_DENIED: { status: 403, title: 'Forbidden' },
  ENROLLMENT_KEY_ORG_MISMATCH: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not Found' },
  CONFLICT: { status: 409, title: 'Conflict' },
  API_KEY_NOT_ACTIVE: { status: 409, title: 'Conflict' },
  LIMIT_REACHED: { status: 409, title: 'Conflict' },
  DEVICE_OFFLINE: { status: 409, title: 'Conflict' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests' },
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
  return body;
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
