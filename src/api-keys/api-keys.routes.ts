// /api-keys (JWT only: API.md §5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { ApiKeysService } from './api-keys.service.js';
import * as S from './api-keys.schemas.js';

export function apiKeysRoutes(deps: { apiKeys: ApiKeysService }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt'], permission: 'organizations:read' } } as const;
  const write = { auth: { via: ['jwt'], permission: 'organizations:write', mfa: true } } as const;
  const tags = ['api-keys'];
  return async (app) => {

    app.get('/api-keys', {
      config: read,
      schema: { operationId: 'listApiKeys', tags, summary: 'API keys of reachable organizations (newest first)', querystring: S.ApiKeyListQuery, response: { 200: S.ApiKeyList } },
    }, (request) => deps.apiKeys.list(callerOf(request), request.query));

    app.post('/api-keys', {
      config: write,
      schema: { operationId: 'createApiKey', tags, summary: 'Create an API key (the key is in this response only)', body: S.CreateApiKeyBody, response: { 201: S.ApiKeyWithSecret } },
    }, async (request, reply) => {
      reply.status(201);
      return deps.apiKeys.create(callerOf(request), request.body, request.meta);
    });

    app.get('/api-keys/:id', {
      config: read,
      schema: { operationId: 'getApiKey', tags, summary: 'One API key', params: S.IdParams, response: { 200: S.ApiKey } },
    }, (request) => deps.apiKeys.get(callerOf(request), request.params.id));

    app.patch('/api-keys/:id', {
      config: write,
      schema: { operationId: 'updateApiKey', tags, summary: 'Change name, scopes (replaced) or rate limit of an active key', params: S.IdParams, body: S.UpdateApiKeyBody, response: { 200: S.ApiKey } },
    }, (request) => deps.apiKeys.update(callerOf(request), request.params.id, request.body, request.meta));

    app.delete('/api-keys/:id', {
      config: write,
      schema: { operationId: 'revokeApiKey', tags, summary: 'Revoke an active key (permanent); returns the revoked key', params: S.IdParams, response: { 200: S.ApiKey } },
    }, (request) => deps.apiKeys.revoke(callerOf(request), request.params.id, request.meta));

    app.post('/api-keys/:id/rotate', {
      config: write,
      schema: {
        operationId: 'rotateApiKey',
        tags,
        summary: 'New key material for an active key: the old key stops at once, usage starts again',
        params: S.IdParams,
        response: { 200: S.ApiKeyWithSecret },
      },
    }, (request) => deps.apiKeys.rotate(callerOf(request), request.params.id, request.meta));
  };
}
