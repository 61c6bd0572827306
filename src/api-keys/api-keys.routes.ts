// /api-keys (JWT only: API.md §5) and GET /auth/api-key, the calling key's own identity.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import { requestMeta } from '../http/client-ip.js';
import type { ApiKeysService } from './api-keys.service.js';
import * as S from './api-keys.schemas.js';

export function apiKeysRoutes(deps: { apiKeys: ApiKeysService; trustProxyHeaders: boolean }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt'], permission: 'organizations:read' } } as const;
  const write = { auth: { via: ['jwt'], permission: 'organizations:write', mfa: true } } as const;
  const tags = ['api-keys'];
  return async (app) => {
    const meta = (request: Parameters<typeof requestMeta>[0]) => requestMeta(request, deps.trustProxyHeaders);

    app.get('/api-keys/', {
      config: read,
      schema: { tags, summary: 'API keys of reachable organizations (newest first)', querystring: S.ApiKeyListQuery, response: { 200: S.ApiKeyList } },
    }, (request) => deps.apiKeys.list(callerOf(request), request.query));

    app.post('/api-keys/', {
      config: write,
      schema: { tags, summary: 'Create an API key (the key is in this response only)', body: S.CreateApiKeyBody, response: { 201: S.ApiKeyWithSecret } },
    }, async (request, reply) => {
      reply.status(201);
      return deps.apiKeys.create(callerOf(request), request.body, meta(request));
    });

    app.get('/api-keys/:id', {
      config: read,
      schema: { tags, summary: 'One API key', params: S.IdParams, response: { 200: S.ApiKey } },
    }, (request) => deps.apiKeys.get(callerOf(request), request.params.id));

    app.patch('/api-keys/:id', {
      config: write,
      schema: { tags, summary: 'Change name, scopes (replaced) or rate limit of an active key', params: S.IdParams, body: S.UpdateApiKeyBody, response: { 200: S.ApiKey } },
    }, (request) => deps.apiKeys.update(callerOf(request), request.params.id, request.body, meta(request)));

    app.delete('/api-keys/:id', {
      config: write,
      schema: { tags, summary: 'Revoke an active key (permanent); returns the revoked key', params: S.IdParams, response: { 200: S.ApiKey } },
    }, (request) => deps.apiKeys.revoke(callerOf(request), request.params.id, meta(request)));

    app.post('/api-keys/:id/rotate', {
      config: write,
      schema: {
        tags,
        summary: 'New key material for an active key: the old key stops at once, usage starts again',
        params: S.IdParams,
        response: { 200: S.ApiKeyWithSecret },
      },
    }, (request) => deps.apiKeys.rotate(callerOf(request), request.params.id, meta(request)));

    app.get('/auth/api-key', {
      config: { auth: { via: ['api_key'] } },
      schema: {
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
