// The HTTP server every module is registered on: logging without secrets, request ids, JSON only,
// validation, problem-details errors, the request's meta, the OpenAPI document and the console.
// Knows no domain module.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AppError } from '../errors.js';
import { DEFAULT_CONSOLE_DIR, installConsole } from './console.js';
import { answerClientError, answerFrameworkError, installErrorHandling, type NotFoundFallback } from './error-handler.js';
import { installOpenApi } from './openapi.js';
import { stdoutLogDestination } from './log-destination.js';
import { installRequestMeta } from './request-meta.js';
import { checkJsonBody, checkUrlValues, createValidatorCompiler } from './validation.js';

export interface ServerOptions {
  logLevel: string;
  /** Where log lines go (default stdout); tests read them to prove secrets stay out. */
  logStream?: NodeJS.WritableStream;
  trustProxyHeaders: boolean;
  /** The built web console (default web/dist). */
  consoleDir?: string;
  /** Called once per answered request, with its time (metrics); unset costs nothing. */
  onRequestCompleted?: RequestCompleted;
  /** More fields for every log line (the trace's ids, with tracing on). */
  logFields?: LogFields;
}

/** Extra fields for each log line (the trace's ids when tracing is on); undefined when none apply. */
export type LogFields = () => Record<string, string> | undefined;

/** The request's route template is `request.routeOptions.url` (undefined when no route matched). */
export type RequestCompleted = (request: FastifyRequest, statusCode: number, elapsedMs: number) => void;

const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

// Secrets never reach the logs. Paths are explicit (top level, body, req.body, credential
// headers): wildcard paths cost ~4 µs on every log line, more than half of a cached request's
// logging, and we never log request bodies or headers beyond these places anyway.
// (`code`, `key` and `token` only inside bodies: at the top level of a log line `code` is an error code.)
const SECRET_FIELDS = ['password', 'accessToken', 'refreshToken', 'mfaToken', 'secret', 'authToken', 'enrollmentKey'];
const BODY_SECRET_FIELDS = [...SECRET_FIELDS, 'key', 'code', 'token'];
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  ...SECRET_FIELDS,
  ...BODY_SECRET_FIELDS.flatMap((field) => [`body.${field}`, `req.body.${field}`]),
];

/**
 * One access-log line per request, after the response, instead of Fastify's two; and the request
 * metrics, here rather than in an onResponse hook of their own, which would cost every request a
 * hook run.
 */
class AccessLog extends LogController {
  constructor(private readonly completed: RequestCompleted | undefined) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const elapsed = reply.elapsedTime;
    this.completed?.(request, reply.statusCode, elapsed);
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: Math.round(elapsed * 100) / 100 };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
}

const mixinOf = (fields: LogFields) => () => fields() ?? {};

export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      stream: options.logStream ?? stdoutLogDestination(),
      ...(options.logFields ? { mixin: mixinOf(options.logFields) } : {}),
    },
    logController: new AccessLog(options.onRequestCompleted),
    genReqId: requestId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    // SPEC writes list roots as `/` under a prefix: /api/v1/audit-logs and /api/v1/audit-logs/ are one route.
    routerOptions: { ignoreTrailingSlash: true },
    // Requests that arrive while shutting down get a problem body from the hook below instead.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(createValidatorCompiler());
  let consoleFallback: NotFoundFallback | null = null;
  installErrorHandling(app, () => consoleFallback);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback-style hooks on every request: an async hook costs a promise and its microtasks per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      return done(new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance'));
    }
    // Before authentication, which already looks path values up (an agent's id).
    done(checkUrlValues(request.params, 'path') ?? checkUrlValues(request.query, 'query') ?? undefined);
  });
  installRequestMeta(app, options.trustProxyHeaders);
  // API.md §4: an empty query parameter (limit=) counts as absent.
  app.addHook('preValidation', (request: FastifyRequest, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (query && typeof query === 'object') {
      for (const key in query) if (query[key] === '') delete query[key];
    }
    done();
  });
  // Bodiless POSTs (rotate, MFA setup) are often sent with a JSON content type: treat empty as no body.
  // JSON everywhere (API.md): other bodies are 415, not parsed as text.
  app.removeContentTypeParser('text/plain');
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  // Every body then passes checkJsonBody; agents' bodies carry what devices report, so their text is
  // cleaned rather than refused (as agent logs have always been).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    defaultJsonParser(request, body as string, (err, parsed) => {
      if (err) return done(err, undefined);
      const refused = checkJsonBody(parsed, request.routeOptions.config.auth?.via.includes('agent') ?? false);
      if (refused) return done(refused, undefined);
      done(null, parsed);
    });
  });

  await installOpenApi(app);
  consoleFallback = await installConsole(app, options.consoleDir ?? DEFAULT_CONSOLE_DIR);
  return app;
}
