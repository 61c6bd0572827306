// Every error, ours or Fastify's, leaves as application/problem+json (API.md §2). Unexpected
// errors are logged in full and answered with a bare 500: no stack, no SQL, no secret.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, databaseUnavailable, invalidRequest, storageFull, toProblem, type ErrorCode } from '../errors.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { isStorageFull } from '../db/storage-full.js';
import { conflictFor } from '../db/unique-conflicts.js';
import { describeValidationErrors } from './validation.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    requestId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details', additionalProperties: true },
);

const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['VALIDATION_FAILED', 'Request body is not valid JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['VALIDATION_FAILED', 'Request body is empty'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'Request body is larger than this endpoint accepts'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type is not supported; send application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['VALIDATION_FAILED', 'Content-Length does not match the body'],
  FST_ERR_CTP_INVALID_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type header is malformed'],
  FST_ERR_BAD_URL: ['VALIDATION_FAILED', 'The URL has a malformed percent-escape or is not UTF-8'],
  FST_ERR_MAX_PARAM_LENGTH: ['VALIDATION_FAILED', 'A path parameter is longer than 100 characters'],
};

// PostgreSQL errors that are the client's doing when a check upstream let them through (unique
// violations: conflictFor). Only conditions a value from the request causes: data exceptions of
// its text, numbers and dates, and jsonb nested too deep; never a server fault's class.
const PG_CODES: Record<string, [ErrorCode, string]> = {
  '42501': ['PERMISSION_DENIED', 'Access to this resource is denied'],
  '22P02': ['VALIDATION_FAILED', 'A value in the request has the wrong format'],
  '22001': ['VALIDATION_FAILED', 'A value in the request is too long'],
  '22003': ['VALIDATION_FAILED', 'A number in the request is out of range'],
  '22007': ['VALIDATION_FAILED', 'A date in the request has the wrong format'],
  '22008': ['VALIDATION_FAILED', 'A date in the request is out of range'],
  '22021': ['VALIDATION_FAILED', 'Text in the request contains a character that cannot be stored'],
  '22P05': ['VALIDATION_FAILED', 'Text in the request contains a character that cannot be stored'],
  '2201W': ['VALIDATION_FAILED', 'A page size in the request is out of range'],
  '2201X': ['VALIDATION_FAILED', 'A page number in the request is out of range'],
  '54001': ['VALIDATION_FAILED', 'A value in the request is nested too deeply'],
};

function statusCode(err: FastifyError): number {
  return typeof err.statusCode === 'number' ? err.statusCode : 500;
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as FastifyError & { validationContext?: string };
  if (e?.validation) {
    return invalidRequest(describeValidationErrors(e.validation as never, e.validationContext));
  }
  // A SyntaxError with status 400 otherwise unnamed comes from a body parser: malformed JSON.
  const parserError = e instanceof SyntaxError && statusCode(e) === 400 ? 'FST_ERR_CTP_INVALID_JSON_BODY' : undefined;
  const fastifyCode = e?.code && FASTIFY_CODES[e.code] ? e.code : parserError;
  if (fastifyCode) {
    const [code, detail] = FASTIFY_CODES[fastifyCode]!;
    return new AppError(code, detail, { cause: err });
  }
  if (isDatabaseUnavailable(err)) return databaseUnavailable(err);
  if (isStorageFull(err)) return storageFull(err);
  const conflict = conflictFor(err);
  if (conflict) return conflict;
  if (e?.code && PG_CODES[e.code] && (e as { severity?: string }).severity) {
    const [code, detail] = PG_CODES[e.code]!;
    return new AppError(code, detail, { cause: err });
  }
  const status = statusCode(e);
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large', { cause: err });
  if (status === 404) return new AppError('NOT_FOUND', 'Not found', { cause: err });
  if (status >= 400 && status < 500) return new AppError('VALIDATION_FAILED', 'The request could not be processed', { cause: err });
  return new AppError('INTERNAL', 'An unexpected error occurred', { cause: err });
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, error: AppError): FastifyReply {
  return reply
    .status(error.status)
    .headers(error.headers)
    .type('application/problem+json')
    .send(toProblem(error, request.id));
}

// What Node's HTTP parser refuses, before any request exists (API.md §2 still applies).
const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['HEADERS_TOO_LARGE', 'The request headers are larger than the server accepts'],
  ERR_HTTP_REQUEST_TIMEOUT: ['REQUEST_TIMEOUT', 'The request was not received in time'],
};

/**
 * Fastify's clientErrorHandler: a request Node's HTTP parser refused (a malformed request line or
 * header, headers too large, a request too slow) is answered in problem details with a request id,
 * like every other error, and the connection closed, since the stream's framing cannot be trusted.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, detail] = (err.code && CLIENT_ERRORS[err.code]) || ['VALIDATION_FAILED', 'The request is not valid HTTP/1.1'];
  const requestId = randomUUID();
  const error = new AppError(code, detail);
  const body = JSON.stringify(toProblem(error, requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${error.status} ${error.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Fastify's router refuses some URLs (a broken escape, an over-long parameter) before any hook runs. */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  sendProblem(reply, request, toAppError(error));
}

/** Answers a request no route matched before the 404 (the web console's browser-side routes). */
export type NotFoundFallback = (request: FastifyRequest, reply: FastifyReply) => FastifyReply | null;

export function installErrorHandling(app: FastifyInstance, notFoundFallback: () => NotFoundFallback | null = () => null): void {
  app.addSchema(ProblemSchema);

  app.setErrorHandler((err, request, reply) => {
    const error = toAppError(err);
    if (error.status >= 500) {
      request.log.error({ err: error.cause ?? err, code: error.code }, 'request failed');
    } else if (error.code === 'PERMISSION_DENIED' && (err as { code?: string }).code === '42501') {
      // Row-level security stopped something the route let through: a bug worth a loud log.
      request.log.warn({ err }, 'row-level security refused a write');
    }
    return sendProblem(reply, request, error);
  });

  app.setNotFoundHandler((request, reply) =>
    notFoundFallback()?.(request, reply) ??
    sendProblem(reply, request, new AppError('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`)),
  );
}
