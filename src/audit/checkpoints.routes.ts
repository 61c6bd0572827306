// /audit-logs/checkpoints, /audit-logs/public-key and /audit-logs/reports/* (API.md §8, issue 9).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../http/common-schemas.js';
import { callerOf } from '../http/auth.js';
import { Paginated, PaginationQuery } from '../http/pagination.js';
import type { AuditCheckpoints } from './checkpoints.js';
import type { AuditReportsService } from './reports.service.js';
import { COMPLIANCE_ACTIONS, SECURITY_EVENT_ACTIONS } from './reports.service.js';
import { OrgIdFilter } from './schemas.js';

const CheckpointQuery = Type.Object({ ...PaginationQuery, orgId: Type.Optional(OrgIdFilter) });

const Checkpoint = Type.Object({
  orgId: Nullable(Uuid),
  seq: Type.Integer({ description: 'Position of the chain head the checkpoint vouches for' }),
  checksum: Type.String({ description: 'Checksum of the row at seq' }),
  timestamp: Timestamp,
  keyId: Type.String({ description: 'First 16 hex characters of the SHA-256 of the signing key’s SPKI DER form' }),
  signature: Type.String({ description: 'Base64 Ed25519 signature of the RFC 8785 (JCS) form of {orgId, seq, checksum, timestamp}' }),
});

const PublicKey = Type.Object({
  keyId: Type.String(),
  algorithm: Type.Literal('Ed25519'),
  publicKey: Type.String({ description: 'PEM, SubjectPublicKeyInfo' }),
});

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

export function auditCheckpointRoutes(deps: { checkpoints: AuditCheckpoints; reports: AuditReportsService }): FastifyPluginAsyncTypebox {
  // API.md §5: audit:read for a JWT caller's role and for API keys (SIEM pulls).
  const config = { auth: { via: ['jwt', 'api_key'], permission: 'audit:read' } } as const;
  const tags = ['audit'];
  return async (app) => {
    app.get('/audit-logs/checkpoints', {
      config,
      schema: {
        tags,
        summary: 'Signed checkpoints of the audit chains',
        description: 'Newest first. Each signs {orgId, seq, checksum, timestamp} (RFC 8785) with the key of /audit-logs/public-key; '
          + 'written every N sealed rows or T minutes per chain and at every retention anchor.',
        querystring: CheckpointQuery,
        response: { 200: Paginated(Checkpoint) },
      },
    }, (request) => deps.checkpoints.list(callerOf(request), request.query));

    app.get('/audit-logs/public-key', {
      config,
      schema: { tags, summary: 'The Ed25519 public key that signs audit checkpoints', response: { 200: PublicKey } },
    }, () => deps.checkpoints.publicKey());

    app.get('/audit-logs/reports/security-events', {
      config,
      schema: {
        tags,
        summary: 'Security events over a date range',
        description: `Counts over every row of the range with one of the actions ${SECURITY_EVENT_ACTIONS.join(', ')}.`,
        querystring: ReportQuery,
        response: { 200: Report },
      },
    }, (request) => deps.reports.securityEvents(callerOf(request), request.query));

    app.get('/audit-logs/reports/compliance', {
      config,
      schema: {
        tags,
        summary: 'Compliance-tracked actions over a date range',
        description: `Counts over every row of the range with one of the actions ${COMPLIANCE_ACTIONS.join(', ')}.`,
        querystring: ReportQuery,
        response: { 200: Report },
      },
    }, (request) => deps.reports.compliance(callerOf(request), request.query));
  };
}
