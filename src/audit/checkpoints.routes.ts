// /audit-logs/checkpoints and /audit-logs/public-key: signed checkpoints of the chains (API.md §8).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../http/common-schemas.js';
import { callerOf } from '../http/auth.js';
import { Paginated, PaginationQuery } from '../http/pagination.js';
import type { AuditCheckpoints } from './checkpoints.js';
import { AUDIT_READ, OrgIdFilter } from './schemas.js';

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

export function auditCheckpointRoutes(deps: { checkpoints: AuditCheckpoints }): FastifyPluginAsyncTypebox {
  const tags = ['audit'];
  return async (app) => {
    app.get('/audit-logs/checkpoints', {
      config: AUDIT_READ,
      schema: {
        operationId: 'listAuditCheckpoints',
        tags,
        summary: 'Signed checkpoints of the audit chains',
        description: 'Newest first. Each signs {orgId, seq, checksum, timestamp} (RFC 8785) with the key of /audit-logs/public-key; '
          + 'written every N sealed rows or T minutes per chain and at every retention anchor.',
        querystring: CheckpointQuery,
        response: { 200: Paginated(Checkpoint) },
      },
    }, (request) => deps.checkpoints.list(callerOf(request), request.query));

    app.get('/audit-logs/public-key', {
      config: AUDIT_READ,
      schema: { operationId: 'getAuditPublicKey', tags, summary: 'The Ed25519 public key that signs audit checkpoints', response: { 200: PublicKey } },
    }, () => deps.checkpoints.publicKey());
  };
}
