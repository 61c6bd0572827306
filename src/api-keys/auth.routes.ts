// /auth/api-key served by the api-keys module: the calling key describes itself.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import * as S from './api-keys.schemas.js';

export function apiKeyAuthRoutes(): FastifyPluginAsyncTypebox {
  const tags = ['api-keys'];
  return async (app) => {
    app.get('/auth/api-key', {
      config: { auth: { via: ['api_key'] } },
      schema: {
        operationId: 'getCurrentApiKey',
        tags,
        summary: 'The calling API key (any key, whatever its scopes)',
        description: 'Beyond the spec: lets automation check its key and read its rate-limit headers without touching data.',
        response: { 200: S.CurrentApiKey },
      },
    }, (request) => {
      const caller = callerOf(request);
      return { id: caller.id, orgId: caller.orgId!, name: caller.name!, scopes: [...caller.permissions] };
    });
  };
}
