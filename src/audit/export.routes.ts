// GET /audit-logs/export (API.md §8): json, ndjson or csv, streamed; JWT (role permission) or an
// API key with the audit:export scope, for SIEM pulls (API.md §5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../http/auth.js';
import { Nullable, StringEnum } from '../http/common-schemas.js';
import { ClampedInteger } from '../http/pagination.js';
import { CSV_COLUMNS, EXPORT_MAX_ROWS, type AuditExportService } from './export.service.js';
import { AuditListQuery, LogEntry, OrgIdFilter } from './schemas.js';

const filters = AuditListQuery.properties;

export const ExportQuery = Type.Object({
  format: Type.Optional(StringEnum(['json', 'ndjson', 'csv'] as const, { description: 'Default json' })),
  user: filters.user,
  action: filters.action,
  resource: filters.resource,
  from: filters.from,
  to: filters.to,
  orgId: Type.Optional(OrgIdFilter),
  afterSeq: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'With orgId: only sealed rows of that chain with a larger seq, in seq order (resume a pull from the last seq received)',
  })),
  limit: Type.Optional(ClampedInteger(`Rows at most; clamped into 1..${EXPORT_MAX_ROWS}, default ${EXPORT_MAX_ROWS}`)),
});

const ExportJson = Type.Object({
  data: Type.Array(LogEntry),
  count: Type.Integer(),
  nextAfterSeq: Nullable(Type.Integer({
    description: 'With afterSeq: the last seq returned, or afterSeq when nothing came. Without it: the highest seq returned when orgId names one chain, else null',
  })),
});

export function auditExportRoutes(deps: { exports: AuditExportService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/audit-logs/export', {
      // An export is audited; HEAD would record one that sent nothing.
      exposeHeadRoute: false,
      config: { auth: { via: ['jwt', 'api_key'], permission: 'audit:export' } },
      schema: {
        operationId: 'exportAuditLogs',
        tags: ['audit'],
        summary: 'Export audit entries (json, ndjson or csv)',
        description: [
          `Entries in the /logs shape, at most ${EXPORT_MAX_ROWS}, newest first (or in seq order with afterSeq), streamed.`,
          'format=json: the object below. format=ndjson (application/x-ndjson): one entry per line.',
          `format=csv (text/csv): a header row \`${CSV_COLUMNS.join(',')}\`, RFC 4180 quoting, details as JSON text, null as an empty field;`,
          "a cell starting with =, +, -, @, tab or CR after any leading ' gets one more leading ' (formula injection): drop it to recover the value.",
          'Every export is audited as data.export, readable once the response has been received.',
        ].join(' '),
        querystring: ExportQuery,
        response: {
          200: {
            description: 'The export, in the format asked for',
            content: {
              'application/json': { schema: ExportJson },
              'application/x-ndjson': { schema: Type.String({ description: 'One entry (the /logs shape) per line' }) },
              'text/csv': { schema: Type.String({ description: 'A header row, then one entry per row (RFC 4180)' }) },
            },
          },
        },
      },
    }, async (request, reply) => {
      const out = await deps.exports.open(callerOf(request), request.meta, request.query);
      return reply
        .type(out.contentType)
        .header('content-disposition', `attachment; filename="${out.filename}"`)
        .header('cache-control', 'no-store')
        // A stream is sent as is (never through the response serialiser); the schema documents the json shape.
        .send(out.body as never);
    });
  };
}
