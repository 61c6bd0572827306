// Which request the running code serves, so every log line written on its behalf carries its
// requestId: `request.log` has it bound already, but services log through the application's logger
// (a mail that failed, a provider that did not answer), which knows no request.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

const currentRequestId = new AsyncLocalStorage<string>();
/** Set on Fastify's per-request child loggers; pino children inherit it through their prototype. */
const BOUND = Symbol('requestIdBound');

/** Extra fields for each log line (the trace's ids when tracing is on); undefined when none apply. */
export type LogFields = () => Record<string, string> | undefined;

/** pino's mixin: the current request's id, unless the logger already binds it. */
export function requestLogMixin(extra?: LogFields) {
  return (_merge: object, _level: number, logger: object): Record<string, string> => {
    const fields = extra?.() ?? {};
    if ((logger as { [BOUND]?: true })[BOUND]) return fields;
    const reqId = currentRequestId.getStore();
    return reqId === undefined ? fields : { reqId, ...fields };
  };
}

/** Fastify's childLoggerFactory, marking the child as bound to its request. */
export function requestChildLogger<L extends { child(bindings: object, options?: object): object }>(
  logger: L,
  bindings: object,
  options: object,
): ReturnType<L['child']> {
  const child = logger.child(bindings, options) as ReturnType<L['child']> & { [BOUND]?: true };
  child[BOUND] = true;
  return child;
}

/**
 * Runs the rest of each request inside its context. Entered twice: a body arrives through socket
 * events, which run in the connection's context, so the context is entered again once the body is
 * parsed (callback hooks: Fastify continues synchronously from `done`).
 */
export function installRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => currentRequestId.run(request.id, done));
  app.addHook('preValidation', (request, _reply, done) => currentRequestId.run(request.id, done));
}
