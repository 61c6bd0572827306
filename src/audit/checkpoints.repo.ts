// SQL for signed audit checkpoints (API.md §8): writing them, finding chains that need one, listing.
import type { Queryable } from '../db/database.js';

export interface NewCheckpoint {
  orgId: string | null;
  seq: number;
  checksum: string;
  /** ISO 8601 UTC with milliseconds: exactly the text that was signed. */
  timestamp: string;
  keyId: string;
  signature: string;
  kind: 'periodic' | 'anchor';
}

export interface CheckpointRow {
  id: number;
  org_id: string | null;
  seq: number;
  checksum: string;
  /** The signed text form, made by PostgreSQL (timestamptz(3) round-trips the milliseconds). */
  ts: string;
  key_id: string;
  signature: string;
  kind: 'periodic' | 'anchor';
}

export interface ChainHeadRow {
  chain_id: string;
  org_id: string | null;
  last_seq: number;
  last_checksum: string;
}

/**
 * Writes checkpoints in one statement. The unique (chain_id, seq) constraint makes a second writer
 * of the same position (another instance, a retry) a no-op instead of a duplicate or an error
 * that would abort the sealing transaction.
 */
export async function insertCheckpoints(tx: Queryable, checkpoints: NewCheckpoint[]): Promise<number> {
  if (checkpoints.length === 0) return 0;
  const { rowCount } = await tx.query(
    `insert into audit_checkpoints (org_id, seq, checksum, timestamp, key_id, signature, kind)
     select * from unnest($1::uuid[], $2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[])
     on conflict on constraint audit_checkpoints_chain_seq do nothing`,
    [
      checkpoints.map((c) => c.orgId),
      checkpoints.map((c) => c.seq),
      checkpoints.map((c) => c.checksum),
      checkpoints.map((c) => c.timestamp),
      checkpoints.map((c) => c.keyId),
      checkpoints.map((c) => c.signature),
      checkpoints.map((c) => c.kind),
    ],
  );
  return rowCount;
}

/** The highest checkpointed seq of a chain (0: none), one backward step on the unique index. */
export async function lastCheckpointSeq(tx: Queryable, chainId: string): Promise<number> {
  const { rows } = await tx.query<{ seq: number | null }>(`select max(seq) as seq from audit_checkpoints where chain_id = $1`, [chainId]);
  return rows[0]?.seq ?? 0;
}

/**
 * Committed chain heads past their last checkpoint, a page at a time in chain order. Read without
 * locking the head: a committed (seq, checksum) is a true statement whoever seals next, and the
 * sealer is never made to wait on a checkpoint.
 */
export async function headsPastLastCheckpoint(tx: Queryable, afterChainId: string | null, limit: number): Promise<ChainHeadRow[]> {
  const { rows } = await tx.query<ChainHeadRow>(
    `select c.chain_id, c.org_id, c.last_seq, c.last_checksum
       from audit_chains c
      where ($1::uuid is null or c.chain_id > $1) and c.last_seq > 0 and c.last_checksum is not null
        and c.last_seq > coalesce((select max(k.seq) from audit_checkpoints k where k.chain_id = c.chain_id), 0)
      order by c.chain_id
      limit $2`,
    [afterChainId, limit],
  );
  return rows;
}

export interface CheckpointFilter {
  /** null: every chain the transaction's scope reaches. */
  orgIds: readonly string[] | null;
  platformOnly: boolean;
}

function whereClause(filter: CheckpointFilter): { sql: string; params: unknown[] } {
  if (filter.platformOnly) return { sql: 'where k.org_id is null', params: [] };
  if (filter.orgIds !== null) return { sql: 'where k.org_id = any($1::uuid[])', params: [filter.orgIds] };
  return { sql: '', params: [] };
}

export async function listCheckpoints(
  tx: Queryable,
  filter: CheckpointFilter,
  limit: number,
  offset: number,
  withTotal = true,
): Promise<{ rows: CheckpointRow[]; total: number | null }> {
  const { sql, params } = whereClause(filter);
  const { rows } = await tx.query<CheckpointRow>(
    `select k.id, k.org_id, k.seq, k.checksum,
            to_char(k.timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ts,
            k.key_id, k.signature, k.kind
       from audit_checkpoints k ${sql}
      order by k.timestamp desc, k.id desc
      limit $${params.length + 1} offset $${params.length + 2}`,
    [...params, limit, offset],
  );
  if (!withTotal) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total from audit_checkpoints k ${sql}`, params);
  return { rows, total: count.rows[0]!.total };
}
