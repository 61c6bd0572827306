// The OpenAPI document is generated from the route schemas: /openapi.json and the UI at /docs.
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

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
        description: 'Multi-tenant control plane for managed devices. Errors are RFC 9457 problem details (application/problem+json) with a stable `code`.',
      },
      servers: [],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          agentToken: { type: 'http', scheme: 'bearer', description: 'the authToken an agent received at enrollment' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
