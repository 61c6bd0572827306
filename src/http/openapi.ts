// The OpenAPI document is generated from the route schemas: /openapi.json and the UI at /docs.
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { MAX_JSON_DEPTH } from './validation.js';

// SPEC "API keys": every response to a request authenticated with a key carries its window, and a
// 429 says when to retry. Documented once for every operation that accepts a key.
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests this API key may make per sliding hour', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window, after this one', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) when the window has room again', schema: { type: 'integer' } },
};
const RETRY_AFTER = { 'Retry-After': { description: 'On 429: seconds until the key may call again', schema: { type: 'integer' } } };

type Operation = {
  security?: Record<string, string[]>[];
  responses?: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>;
};

const operationsOf = (doc: unknown): Operation[] =>
  Object.values((doc as { paths?: Record<string, Record<string, Operation>> }).paths ?? {}).flatMap((item) => Object.values(item));

/**
 * API.md §2: every error leaves as application/problem+json. The route schemas (which also
 * serialize) name no media type, so the generator files every response under application/json;
 * errors are moved to the type they are served with.
 */
function documentProblemMediaType<D>(doc: D): D {
  for (const operation of operationsOf(doc)) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const json = response.content?.['application/json'];
      if (!/^[45]/.test(status) || json === undefined) continue;
      const { 'application/json': _, ...others } = response.content!;
      response.content = { 'application/problem+json': json, ...others };
    }
  }
  return doc;
}

function documentRateLimitHeaders<D>(doc: D): D {
  for (const operation of operationsOf(doc)) {
    if (!operation.security?.some((requirement) => 'apiKeyAuth' in requirement)) continue;
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const headers = status === '4XX' ? { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER } : RATE_LIMIT_HEADERS;
      response.headers = { ...response.headers, ...headers };
    }
  }
  return doc;
}

export async function installOpenApi(app: FastifyInstance): Promise<void> {
  // Every documented route can fail with a problem body; say so once here rather than per route.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.schema || route.schema.hide) return;
    const response = { ...(route.schema.response as Record<string, unknown> | undefined) };
    response['4XX'] ??= { $ref: 'Problem#', description: 'Problem details (RFC 9457)' };
    response['5XX'] ??= { $ref: 'Problem#', description: 'Problem details (RFC 9457)' };
    route.schema = { ...route.schema, response };
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Device Management Service',
        version: '1.0.0',
        description:
          'Multi-tenant control plane for managed devices. Errors are RFC 9457 problem details (application/problem+json) with a stable `code`. ' +
          `Every request, beyond its schema: JSON bodies of at most 1 MiB (5 MiB on agent routes) nested at most ${MAX_JSON_DEPTH} levels deep, ` +
          'finite numbers, and text (body, query and path) without NUL or unpaired surrogates; otherwise 400 VALIDATION_FAILED (413 for size). ' +
          'Agent-token routes store such text from devices with U+FFFD instead.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      // Relative: the API is served from where the document is (every path carries /api/v1).
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          agentToken: { type: 'http', scheme: 'bearer', description: 'the authToken an agent received at enrollment' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'the METRICS_TOKEN the service is configured with (GET /metrics only)' },
        },
      },
    },
    transformObject: (document) =>
      documentProblemMediaType(documentRateLimitHeaders('openapiObject' in document ? document.openapiObject : document.swaggerObject)),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
