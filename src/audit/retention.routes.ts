// /audit-logs/retention (JWT only, API.md §5): audit:read to read, organizations:write + MFA to change.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../http/auth.js';
import { Nullable, Timestamp, Uuid } from '../http/common-schemas.js';
import type { RetentionService } from './retention.service.js';
import { OrgIdFilter } from './schemas.js';

const Policy = Type.Object({
  orgId: Nullable(Uuid), // null: the platform chain
  retentionDays: Type.Integer(),
  archiveToObjectStore: Type.Boolean(),
  lastCleanupAt: Nullable(Timestamp),
});
const PolicyQuery = Type.Object({ orgId: Type.Optional(OrgIdFilter) });
const PolicyBody = Type.Object(
  {
    retentionDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    archiveToObjectStore: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'lastCleanupAt is read-only' },
);

export function auditRetentionRoutes(deps: { retention: RetentionService }): FastifyPluginAsyncTypebox {
  const tags = ['audit'];
  return async (app) => {
    app.get('/audit-logs/retention', {
      config: { auth: { via: ['jwt'], permission: 'audit:read' } },
      schema: { operationId: 'getAuditRetentionPolicy', tags, summary: 'The organization’s audit retention policy (default 365 days)', querystring: PolicyQuery, response: { 200: Policy } },
    }, (request) => deps.retention.getPolicy(callerOf(request), request.query.orgId));

    app.put('/audit-logs/retention', {
      config: { auth: { via: ['jwt'], permission: 'organizations:write', mfa: true } },
      schema: {
        operationId: 'setAuditRetentionPolicy',
        tags,
        summary: 'Set the organization’s audit retention policy',
        description: 'Rows older than retentionDays are deleted by the retention worker from the start of the chain; with archiveToObjectStore they are archived first.',
        querystring: PolicyQuery,
        body: PolicyBody,
        response: { 200: Policy },
      },
    }, (request) => deps.retention.putPolicy(callerOf(request), request.query.orgId, request.body, request.meta));
  };
}
