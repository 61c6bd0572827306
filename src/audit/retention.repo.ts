// SQL for audit retention: policies, the expired prefix of a chain, and its deletion with the anchor.
import type { Queryable } from '../db/database.js';

export interface PolicyRow {
  org_id: string;
  retention_days: number;
  archive_to_object_store: boolean;
  last_cleanup_at: Date | null;
}

export const DEFAULT_RETENTION_DAYS = 365;

/** The organization's policy, or the defaults when it never set one. */
export async function findPolicy(tx: Queryable, orgId: string): Promise<PolicyRow> {
  const { rows } = await tx.query<PolicyRow>(
    `select org_id, retention_days, archive_to_object_store, last_cleanup_at from audit_retention_policies where org_id = $1`,
    [orgId],
  );
  return rows[0] ?? { org_id: orgId, retention_days: DEFAULT_RETENTION_DAYS, archive_to_object_store: false, last_cleanup_at: null };
}

export async function savePolicy(tx: Queryable, orgId: string, values: { retentionDays: number; archiveToObjectStore: boolean }): Promise<PolicyRow> {
  const { rows } = await tx.query<PolicyRow>(
    `insert into audit_retention_policies as p (org_id, retention_days, archive_to_object_store) values ($1, $2, $3)
     on conflict (org_id) do update set retention_days = excluded.retention_days, archive_to_object_store = excluded.archive_to_object_store, updated_at = now()
     returning org_id, retention_days, archive_to_object_store, last_cleanup_at`,
    [orgId, values.retentionDays, values.archiveToObjectStore],
  );
  return rows[0]!;
}

export async function markCleaned(tx: Queryable, orgId: string, at: Date): Promise<void> {
  await tx.query(
    `insert into audit_retention_policies as p (org_id, last_cleanup_at) values ($1, $2)
     on conflict (org_id) do update set last_cleanup_at = excluded.last_cleanup_at`,
    [orgId, at],
  );
}

/** Organizations with a chain (the platform chain has no policy and is kept). */
export async function chainedOrganizations(tx: Queryable): Promise<string[]> {
  const { rows } = await tx.query<{ org_id: string }>(`select org_id from audit_chains where org_id is not null order by org_id`);
  return rows.map((r) => r.org_id);
}

/**
 * The end of the next expired segment after `afterSeq`: up to `limit` sealed rows in seq order,
 * cut before the first row at or after the cutoff (rows are sealed in insertion order, so that row
 * ends the expired prefix). null when nothing after `afterSeq` has expired.
 */
export async function expiredSegmentEnd(tx: Queryable, chainId: string, afterSeq: number, cutoff: Date, limit: number): Promise<number | null> {
  const { rows } = await tx.query<{ end: number | null }>(
    `select coalesce(min(s.seq) filter (where s.timestamp >= $3) - 1, max(s.seq))::bigint as end
       from (select seq, timestamp from audit_logs where chain_id = $1 and seq > $2 order by seq limit $4) s`,
    [chainId, afterSeq, cutoff, limit],
  );
  const end = rows[0]?.end === null || rows[0]?.end === undefined ? null : Number(rows[0].end);
  return end !== null && end > afterSeq ? end : null;
}

/** The chain's current anchor (0: nothing deleted yet). */
export async function currentAnchor(tx: Queryable, chainId: string): Promise<number> {
  const { rows } = await tx.query<{ anchor_seq: string | null }>(`select anchor_seq from audit_chain_anchors where chain_id = $1`, [chainId]);
  return Number(rows[0]?.anchor_seq ?? 0);
}

/**
 * Locks the chain's anchor (creating it at 0 the first time) and returns it: another worker may
 * have moved it. The sealer never touches this row, so neither waits for the other.
 */
export async function lockAnchor(tx: Queryable, chainId: string, orgId: string | null): Promise<number> {
  await tx.query(
    `insert into audit_chain_anchors (chain_id, org_id, anchor_seq, anchor_checksum) values ($1, $2, 0, '') on conflict (chain_id) do nothing`,
    [chainId, orgId],
  );
  const { rows } = await tx.query<{ anchor_seq: string }>(`select anchor_seq from audit_chain_anchors where chain_id = $1 for update`, [chainId]);
  return Number(rows[0]!.anchor_seq);
}

/** Deletes rows (afterSeq, toSeq] and records the last one as the chain's anchor. */
export async function deleteSegment(tx: Queryable, chainId: string, afterSeq: number, toSeq: number): Promise<{ seq: number; checksum: string }> {
  const { rows } = await tx.query<{ seq: string; checksum: string }>(`select seq, checksum from audit_logs where chain_id = $1 and seq = $2`, [chainId, toSeq]);
  const anchor = { seq: Number(rows[0]!.seq), checksum: rows[0]!.checksum };
  await tx.query(`delete from audit_logs where chain_id = $1 and seq > $2 and seq <= $3`, [chainId, afterSeq, toSeq]);
  await tx.query(`update audit_chain_anchors set anchor_seq = $2, anchor_checksum = $3 where chain_id = $1`, [chainId, anchor.seq, anchor.checksum]);
  return anchor;
}
