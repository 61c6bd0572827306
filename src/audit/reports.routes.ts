// /audit-logs/reports/*: the security-events and compliance reports (API.md §8).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../http/common-schemas.js';
import { callerOf } from '../http/auth.js';
import type { AuditReportsService } from './reports.service.js';
import { COMPLIANCE_ACTIONS, SECURITY_EVENT_ACTIONS } from './actions.js';
import { AUDIT_READ, OrgIdFilter } from './schemas.js';

const ReportQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the range (inclusive); default 30 days before `to`' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'End of the range (inclusive); default now' })),
  orgId: Type.Optional(OrgIdFilter),
});

const Count = Type.Integer({ minimum: 0 });
const Report = Type.Object({
  from: Timestamp,
  to: Timestamp,
  total: Count,
  byAction: Type.Array(Type.Object({ action: Type.String(), count: Count }), { description: 'Most frequent first' }),
  byResult: Type.Object({ success: Count, failure: Count, denied: Count }),
  byActor: Type.Array(Type.Object({ actorId: Nullable(Uuid), actorEmail: Nullable(Type.String()), count: Count }), { description: 'Most active first' }),
  byDay: Type.Array(Type.Object({ day: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'UTC date' }), count: Count }), {
    description: 'Days with at least one event, oldest first',
  }),
});

export function auditReportsRoutes(deps: { reports: AuditReportsService }): FastifyPluginAsyncTypebox {
  const tags = ['audit'];
  return async (app) => {
    app.get('/audit-logs/reports/security-events', {
      config: AUDIT_READ,
      schema: {
        operationId: 'getSecurityEventsReport',
        tags,
        summary: 'Security events over a date range',
        description: `Counts over every row of the range with one of the actions ${SECURITY_EVENT_ACTIONS.join(', ')}.`,
        querystring: ReportQuery,
        response: { 200: Report },
      },
    }, (request) => deps.reports.securityEvents(callerOf(request), request.query));

    app.get('/audit-logs/reports/compliance', {
      config: AUDIT_READ,
      schema: {
        operationId: 'getComplianceReport',
        tags,
        summary: 'Compliance-tracked actions over a date range',
        description: `Counts over every row of the range with one of the actions ${COMPLIANCE_ACTIONS.join(', ')}.`,
        querystring: ReportQuery,
        response: { 200: Report },
      },
    }, (request) => deps.reports.compliance(callerOf(request), request.query));
  };
}
