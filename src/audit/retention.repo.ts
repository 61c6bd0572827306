// SQL for audit retention: policies, the expired prefix of a chain, and its deletion with the anchor.
// A chain is an organization's, or the platform chain (org_id null, chain_id the nil UUID).
import type { Queryable } from '../db/database.js';
import { INDEX_ORDER_ONLY } from './audit.repo.js';

export interface PolicyRow {
  org_id: string | null;
  retention_days: number;
  archive_to_object_store: boolean;
  last_cleanup_at: Date | null;
}

export interface ChainRef {
  chainId: string;
  orgId: string | null;
}

export const DEFAULT_RETENTION_DAYS = 365;

/** The chain's policy, or the defaults when none was ever set. */
export async function findPolicy(tx: Queryable, chain: ChainRef): Promise<PolicyRow> {
  const { rows } = await tx.query<PolicyRow>(
    `select org_id, retention_days, archive_to_object_store, last_cleanup_at from audit_retention_policies where chain_id = $1`,
    [chain.chainId],
  );
  return rows[0] ?? { org_id: chain.orgId, retention_days: DEFAULT_RETENTION_DAYS, archive_to_object_store: false, last_cleanup_at: null };
}

export async function savePolicy(tx: Queryable, chain: ChainRef, values: { retentionDays: number; archiveToObjectStore: boolean }): Promise<PolicyRow> {
  const { rows } = await tx.query<PolicyRow>(
    `insert into audit_retention_policies as p (org_id, retention_days, archive_to_object_store) values ($1, $2, $3)
     on conflict (chain_id) do update set retention_days = excluded.retention_days, archive_to_object_store = excluded.archive_to_object_store, updated_at = now()
     returning org_id, retention_days, archive_to_object_store, last_cleanup_at`,
    [chain.orgId, values.retentionDays, values.archiveToObjectStore],
  );
  return rows[0]!;
}

/** Retention's own write (the app role may not move lastCleanupAt). */
export async function markCleaned(tx: Queryable, chain: ChainRef, at: Date): Promise<void> {
  await tx.query(
    `insert into audit_retention_policies as p (org_id, last_cleanup_at) values ($1, $2)
     on conflict (chain_id) do update set last_cleanup_at = excluded.last_cleanup_at`,
    [chain.orgId, at],
  );
}

/** Every chain with sealed rows: the organizations', and the platform chain. */
export async function chains(tx: Queryable): Promise<ChainRef[]> {
  const { rows } = await tx.query<{ chain_id: string; org_id: string | null }>(`select chain_id, org_id from audit_chains order by chain_id`);
  return rows.map((r) => ({ chainId: r.chain_id, orgId: r.org_id }));
}

/**
 * The end of the next expired segment after `afterSeq`: up to `limit` sealed rows in seq order,
 * cut before the first row at or after the cutoff (rows are sealed in insertion order, so that row
 * ends the expired prefix). null when nothing after `afterSeq` has expired.
 */
export async function expiredSegmentEnd(tx: Queryable, chainId: string, afterSeq: number, cutoff: Date, limit: number): Promise<number | null> {
  // The seals in seq order, each entry looked up by its key (see audit.repo.ts).
  await tx.query(INDEX_ORDER_ONLY);
  const { rows } = await tx.query<{ end: number | null }>(
    `select coalesce(min(r.seq) filter (where r.timestamp >= $3) - 1, max(r.seq))::bigint as end
       from (select s.seq, a.timestamp from audit_seals s
               cross join lateral (select e.timestamp from audit_entries e where e.chain_id = s.chain_id and e.pending_order = s.pending_order offset 0) a
              where s.chain_id = $1 and s.seq > $2 order by s.seq limit $4) r`,
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

/** The chain's anchor: the seq and checksum of the last row deleted (null: nothing deleted yet). */
export async function anchorOf(tx: Queryable, chainId: string): Promise<{ seq: number; checksum: string } | null> {
  const { rows } = await tx.query<{ anchor_seq: string; anchor_checksum: string }>(
    `select anchor_seq, anchor_checksum from audit_chain_anchors where chain_id = $1 and anchor_seq > 0`,
    [chainId],
  );
  return rows[0] ? { seq: Number(rows[0].anchor_seq), checksum: rows[0].anchor_checksum } : null;
}

/**
 * Locks the chain's anchor (creating it at 0 the first time) and returns it: another worker may
 * have moved it. The sealer never touches this row, so neither waits for the other.
 */
export async function lockAnchor(tx: Queryable, chain: ChainRef): Promise<number> {
  await tx.query(
    `insert into audit_chain_anchors (chain_id, org_id, anchor_seq, anchor_checksum) values ($1, $2, 0, '') on conflict (chain_id) do nothing`,
    [chain.chainId, chain.orgId],
  );
  const { rows } = await tx.query<{ anchor_seq: string }>(`select anchor_seq from audit_chain_anchors where chain_id = $1 for update`, [chain.chainId]);
  return Number(rows[0]!.anchor_seq);
}

/**
 * Records row `toSeq` as the chain's anchor, then deletes rows (afterSeq, toSeq]: their entries,
 * then their seals. In that order, because the database refuses to delete a row its chain's
 * anchor does not cover (0009), and a seal whose entry would outlive it (0012).
 */
export async function deleteSegment(tx: Queryable, chainId: string, afterSeq: number, toSeq: number): Promise<{ seq: number; checksum: string }> {
  const { rows } = await tx.query<{ seq: string; checksum: string }>(`select seq, checksum from audit_seals where chain_id = $1 and seq = $2`, [chainId, toSeq]);
  const anchor = { seq: Number(rows[0]!.seq), checksum: rows[0]!.checksum };
  await tx.query(`update audit_chain_anchors set anchor_seq = $2, anchor_checksum = $3 where chain_id = $1`, [chainId, anchor.seq, anchor.checksum]);
  await tx.query(
    `delete from audit_entries
      where chain_id = $1 and pending_order = any (array(select pending_order from audit_seals where chain_id = $1 and seq > $2 and seq <= $3))`,
    [chainId, afterSeq, toSeq],
  );
  await tx.query(`delete from audit_seals where chain_id = $1 and seq > $2 and seq <= $3`, [chainId, afterSeq, toSeq]);
  return anchor;
}
