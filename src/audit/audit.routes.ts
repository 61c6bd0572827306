// /audit-logs: the entries list, /logs, one entry, search and chain verification.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { AuditService } from './audit.service.js';
import * as S from './schemas.js';

export function auditRoutes(deps: { audit: AuditService }): FastifyPluginAsyncTypebox {
  const tags = ['audit'];
  return async (app) => {
    app.get('/audit-logs', {
      config: S.AUDIT_READ,
      schema: { operationId: 'listAuditEntries', tags, summary: 'Audit entries (entries shape)', querystring: S.AuditListQuery, response: { 200: S.LegacyList } },
    }, (request) => deps.audit.entries(callerOf(request), request.query));

    app.get('/audit-logs/logs', {
      config: S.AUDIT_READ,
      schema: {
        operationId: 'listAuditLogs',
        tags,
        summary: 'Audit entries with every chain field',
        description: 'Newest first. Rows are sealed into their chain within a second; until then seq, prevChecksum and checksum are null.',
        querystring: S.AuditListQuery,
        response: { 200: S.LogList },
      },
    }, (request) => deps.audit.logs(callerOf(request), request.query));

    app.get('/audit-logs/logs/:id', {
      config: S.AUDIT_READ,
      schema: { operationId: 'getAuditLog', tags, summary: 'One audit entry', params: S.IdParams, response: { 200: S.LogEntry } },
    }, (request) => deps.audit.log(callerOf(request), request.params.id));

    app.get('/audit-logs/search', {
      config: S.AUDIT_READ,
      schema: { operationId: 'searchAuditLogs', tags, summary: 'Search audit entries', querystring: S.AuditSearchQuery, response: { 200: S.LogList } },
    }, (request) => deps.audit.logs(callerOf(request), request.query));

    app.get('/audit-logs/verify', {
      config: S.AUDIT_READ,
      schema: {
        operationId: 'verifyAuditChain',
        tags,
        summary: 'Verify an organization’s hash chain',
        description: 'Recomputes every checksum in seq order from the anchor (or seq 1) and reports the first broken row. '
          + 'At most 2 verifications run at once per server, and one per chain; another call is answered 429 RATE_LIMITED with Retry-After (seconds) '
          + 'instead of waiting, unless it asks for the same range of the same chain as a running one, which it then shares. '
          + 'A repeated call on an unchanged chain answers from the last result: any new sealed row, retention run, anchor '
          + 'move or change to a stored row verifies again. `pending` is always current.',
        querystring: S.VerifyQuery,
        response: { 200: S.VerifyResult },
      },
    }, (request) => deps.audit.verify(callerOf(request), request.query));
  };
}
