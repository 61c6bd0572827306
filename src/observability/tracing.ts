// OpenTelemetry traces, loaded by main.ts only when OTEL_EXPORTER_OTLP_ENDPOINT is set: the official
// Node SDK with the HTTP (server and client), PostgreSQL (pg) and Redis (ioredis) instrumentations,
// exported over OTLP/HTTP. Everything else is the SDK's own OTEL_* configuration (headers, service
// name, sampler, resource attributes).
// The service is ES modules, so pg and ioredis are only patched through the module hook registered
// here, before app.js (and with it pg and ioredis) is imported.
import { register } from 'node:module';
import type { IncomingMessage, ClientRequest } from 'node:http';
import { trace, type Span } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import type { FastifyInstance } from 'fastify';
import type { LogFields } from '../http/server.js';

export interface Tracing {
  /** Names each HTTP span by its route template and tags it with the requestId. */
  instrument(app: FastifyInstance): void;
  /** trace_id and span_id on log lines written inside a span. */
  logFields: LogFields;
  /** Flushes what is buffered; called on shutdown. */
  shutdown(): Promise<void>;
}

/**
 * Query strings stay out of spans: an SSO callback's `code`, a webhook URL's token. The
 * instrumentation sets the full target when the span starts; these hooks overwrite it.
 */
function withoutQuery(span: Span, request: IncomingMessage | ClientRequest): void {
  if ('path' in request && typeof request.path === 'string') {
    const path = request.path.split('?')[0]!;
    const origin = `${request.protocol}//${request.host}`;
    span.setAttribute('http.url', `${origin}${path}`);
    span.setAttribute('url.full', `${origin}${path}`);
    return;
  }
  const url = (request as IncomingMessage).url ?? '';
  const path = url.split('?')[0]!;
  span.setAttribute('http.target', path);
  span.setAttribute('url.path', path);
  span.setAttribute('url.query', '');
}

export function startTracing(serviceVersion: string): Tracing {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'device-management-service',
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      new HttpInstrumentation({
        requestHook: (span, request) => withoutQuery(span, request),
        // The exporter's own calls would trace themselves.
        ignoreOutgoingRequestHook: (request) => String(request.path ?? '').startsWith('/v1/traces'),
      }),
      // Only statements a request makes: the workers' polling would otherwise be a trace per second.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  process.env.OTEL_SERVICE_VERSION ??= serviceVersion;
  sdk.start();
  return {
    instrument(app) {
      app.addHook('onRequest', (request, _reply, done) => {
        const span = trace.getActiveSpan();
        const route = request.routeOptions.url;
        if (span && route) span.updateName(`${request.method} ${route}`).setAttribute('http.route', route);
        span?.setAttribute('request.id', request.id);
        done();
      });
    },
    logFields() {
      const context = trace.getActiveSpan()?.spanContext();
      return context ? { trace_id: context.traceId, span_id: context.spanId } : undefined;
    },
    shutdown: () => sdk.shutdown(),
  };
}
