// The audit queue as metrics see it (audit_pending, migrations/0012): how many entries wait to be
// sealed, and how long the oldest of each chain has waited. One statement whose cost follows the
// queue, not the log: a healthy queue holds about a second of entries.
import type { Queryable } from '../db/database.js';
import { PLATFORM_CHAIN_ID } from './audit.repo.js';

export interface PendingChain {
  /** null: the platform chain. */
  orgId: string | null;
  pending: number;
  /** When the chain's oldest waiting entry was recorded. */
  oldest: Date;
}

export interface PendingBacklog {
  /** Entries waiting, over every chain. */
  pending: number;
  /** Chains with at least one entry waiting. */
  chains: number;
  /** The `top` chains whose oldest waiting entry is oldest, oldest first. */
  worst: PendingChain[];
}

/**
 * Each chain's queue head by a loose index scan (one probe per chain with entries waiting, as the
 * sealer finds them), the head's entry by its key for its time; the queue is counted once.
 */
export async function pendingBacklog(tx: Queryable, top: number): Promise<PendingBacklog> {
  const { rows } = await tx.query<{ chain_id: string | null; oldest: Date | null; pending: number | null; total: number; chains: number }>(
    `with recursive heads as (
       (select chain_id, pending_order from audit_pending order by chain_id, pending_order limit 1)
       union all
       select n.chain_id, n.pending_order from heads h
        cross join lateral (select p.chain_id, p.pending_order from audit_pending p
                             where p.chain_id > h.chain_id order by p.chain_id, p.pending_order limit 1) n
     ),
     aged as (
       select h.chain_id, e.timestamp from heads h
        cross join lateral (select e.timestamp from audit_entries e
                             where e.chain_id = h.chain_id and e.pending_order = h.pending_order offset 0) e
     )
     select t.chain_id, t.timestamp as oldest,
            (select count(*)::int from audit_pending p where p.chain_id = t.chain_id) as pending, s.total, s.chains
       from (select (select count(*)::int from audit_pending) as total, (select count(*)::int from aged) as chains) s
       left join lateral (select chain_id, timestamp from aged order by timestamp limit $1) t on true`,
    [top],
  );
  const first = rows[0];
  return {
    pending: first?.total ?? 0,
    chains: first?.chains ?? 0,
    worst: rows
      .filter((r) => r.chain_id !== null && r.oldest !== null)
      .map((r) => ({ orgId: r.chain_id === PLATFORM_CHAIN_ID ? null : r.chain_id, pending: r.pending ?? 0, oldest: r.oldest! })),
  };
}
