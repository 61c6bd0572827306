// GET /metrics: the Prometheus exposition, for whoever holds METRICS_TOKEN (a bearer of its own:
// no user, API key or agent credential opens it, and it names no tenant's data). Without the
// token configured, metrics are off and the route says so.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { bearerToken } from '../http/auth.js';
import type { Metrics } from './metrics.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

export function metricsRoutes(app: FastifyInstance, deps: { token: string | null; metrics: Metrics | null }): void {
  // Compared as digests: constant time whatever the length of what was sent.
  const expected = deps.token === null ? null : digest(deps.token);

  app.get('/metrics', {
    schema: {
      operationId: 'getMetrics',
      tags: ['operations'],
      summary: 'Metrics in the Prometheus text format',
      description: 'For Prometheus: `Authorization: Bearer <METRICS_TOKEN>`. 404 while METRICS_TOKEN is not set (metrics are off).',
      security: [{ metricsToken: [] }],
      response: {
        200: {
          description: 'Prometheus text exposition format 0.0.4',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      },
    },
  }, async (request, reply) => {
    const { metrics } = deps;
    if (expected === null || metrics === null) throw new AppError('NOT_FOUND', 'Metrics are off: set METRICS_TOKEN to serve them here');
    const given = bearerToken(request);
    if (given === null || !timingSafeEqual(digest(given), expected)) {
      throw new AppError('UNAUTHENTICATED', 'Send the metrics token: Authorization: Bearer <METRICS_TOKEN>', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
    }
    reply.header('content-type', metrics.contentType);
    reply.header('cache-control', 'no-store');
    return metrics.render();
  });
}
