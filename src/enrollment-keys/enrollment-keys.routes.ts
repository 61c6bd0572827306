// /enrollment-keys (JWT only): organizations:read to view, organizations:write + MFA to change.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { EnrollmentKeysService } from './enrollment-keys.service.js';
import * as S from './enrollment-keys.schemas.js';

export function enrollmentKeysRoutes(deps: { enrollmentKeys: EnrollmentKeysService }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt'], permission: 'organizations:read' } } as const;
  const write = { auth: { via: ['jwt'], permission: 'organizations:write', mfa: true } } as const;
  const tags = ['enrollment-keys'];
  return async (app) => {

    app.get('/enrollment-keys', {
      config: read,
      schema: { operationId: 'listEnrollmentKeys', tags, summary: 'Enrollment keys of reachable organizations (newest first)', querystring: S.EnrollmentKeyListQuery, response: { 200: S.EnrollmentKeyList } },
    }, (request) => deps.enrollmentKeys.list(callerOf(request), request.query));

    app.post('/enrollment-keys', {
      config: write,
      schema: { operationId: 'createEnrollmentKey', tags, summary: 'Create an enrollment key (the key is in this response only)', body: S.CreateEnrollmentKeyBody, response: { 201: S.EnrollmentKeyWithSecret } },
    }, async (request, reply) => {
      reply.status(201);
      return deps.enrollmentKeys.create(callerOf(request), request.body, request.meta);
    });

    app.get('/enrollment-keys/:id', {
      config: read,
      schema: { operationId: 'getEnrollmentKey', tags, summary: 'One enrollment key', params: S.IdParams, response: { 200: S.EnrollmentKey } },
    }, (request) => deps.enrollmentKeys.get(callerOf(request), request.params.id));

    app.post('/enrollment-keys/:id/rotate', {
      config: write,
      schema: {
        operationId: 'rotateEnrollmentKey',
        tags,
        summary: 'New key material; usage starts again; maxUsage (null: unlimited) and expiresAt kept unless given',
        params: S.IdParams,
        body: S.RotateEnrollmentKeyBody,
        response: { 200: S.EnrollmentKeyWithSecret },
      },
    }, (request) => deps.enrollmentKeys.rotate(callerOf(request), request.params.id, request.body ?? undefined, request.meta));

    app.delete('/enrollment-keys/:id', {
      config: write,
      schema: { operationId: 'deleteEnrollmentKey', tags, summary: 'Delete an enrollment key permanently', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => deps.enrollmentKeys.remove(callerOf(request), request.params.id, request.meta));
  };
}
