// SQL of the outbound sender: leases, cursors, progress and the delivery log (migration 0013).
// Everything runs as the service itself (system scope).
import type { Database, Queryable } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { COVERED_CHAINS, type DestinationSecrets } from './event-destinations.repo.js';

/** How long a chain's delivery fails before its destination is `failing` (API.md §9). */
export const FAILING_AFTER_MS = 24 * 3600_000;

export interface LeasedDestination extends DestinationSecrets {
  id: string;
  name: string;
  org_id: string | null;
  partner_id: string | null;
  kind: 'webhook' | 'syslog';
  url: string;
  filter_actions: string[];
  filter_results: string[];
  ca_certificate: string | null;
}

export interface CursorRow {
  chain_id: string;
  last_seq: number;
  attempts: number;
  generation: number;
}

const LEASED_COLUMNS = `d.id, d.name, d.org_id, d.partner_id, d.kind, d.url, d.filter_actions, d.filter_results, d.ca_certificate,
  d.secret_sealed, d.previous_secret_sealed, d.previous_secret_until`;

/**
 * Takes the lease of every enabled destination nobody else holds, renews this sender's own once
 * half of it has run, and returns all it holds. SKIP LOCKED: instances never wait on each other.
 */
export function leaseDestinations(db: Database, owner: string, leaseMs: number): Promise<LeasedDestination[]> {
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<LeasedDestination>(
      `with taken as (
         update event_destinations d set lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond'
          where d.id in (select id from event_destinations
                          where enabled and (lease_until is null or lease_until < now()
                                             or (lease_owner = $1 and lease_until < now() + $2 / 2 * interval '1 millisecond'))
                          for update skip locked)
          returning ${LEASED_COLUMNS}
       )
       select * from taken
       union all
       select ${LEASED_COLUMNS} from event_destinations d
        where d.lease_owner = $1 and d.enabled and d.lease_until >= now() + $2 / 2 * interval '1 millisecond'`,
      [owner, leaseMs],
    );
    return rows;
  });
}

/** Extends a lease still held; false when it was lost (expired and taken, or the destination disabled or gone). */
export function renewLease(db: Database, id: string, owner: string, leaseMs: number): Promise<boolean> {
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rowCount } = await tx.query(
      `update event_destinations set lease_until = now() + $3 * interval '1 millisecond' where id = $1 and lease_owner = $2 and enabled`,
      [id, owner, leaseMs],
    );
    return rowCount > 0;
  });
}

export function releaseLeases(db: Database, owner: string): Promise<void> {
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    await tx.query(`update event_destinations set lease_owner = null, lease_until = null where lease_owner = $1`, [owner]);
  });
}

/**
 * Gives chains that appeared since the destination was made (a partner's new organization) a
 * cursor at 0, then returns the cursors with sealed entries beyond them whose retry is due, and
 * the destination's lag in entries over all its chains.
 */
export function dueCursors(db: Database, d: LeasedDestination, now: Date): Promise<{ due: CursorRow[]; lag: number }> {
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    if (!d.org_id) {
      await tx.query(
        `insert into event_destination_cursors (destination_id, chain_id, org_id, last_seq)
         select $3, c.chain_id, c.org_id, 0 from (${COVERED_CHAINS}) c
         on conflict (destination_id, chain_id) do nothing`,
        [null, d.partner_id, d.id],
      );
    }
    const { rows } = await tx.query<CursorRow & { head: number; due: boolean }>(
      `select c.chain_id, c.last_seq, c.attempts, c.generation, h.last_seq as head, (c.next_attempt_at is null or c.next_attempt_at <= $2) as due
         from event_destination_cursors c join audit_chains h on h.chain_id = c.chain_id
        where c.destination_id = $1 and h.last_seq > c.last_seq`,
      [d.id, now],
    );
    return {
      due: rows.filter((r) => r.due).map((r) => ({ chain_id: r.chain_id, last_seq: Number(r.last_seq), attempts: r.attempts, generation: r.generation })),
      lag: rows.reduce((n, r) => n + Number(r.head) - Number(r.last_seq), 0),
    };
  });
}

export interface Progress {
  destinationId: string;
  owner: string;
  chainId: string;
  /** The cursor's generation when it was read: a replay since then wins. */
  generation: number;
  now: Date;
  /** Every entry up to here is done. */
  lastSeq: number;
  failure: { attempts: number; nextAttemptAt: Date; error: string } | null;
  attempts: {
    entryId: string; orgId: string | null; seq: number; action: string; attempt: number;
    outcome: 'delivered' | 'failed'; responseStatus: number | null; error: string | null; durationMs: number;
  }[];
}

/**
 * Moves the cursor (unless a replay rewound it meanwhile: then it stays where the replay put it),
 * logs the attempts, and updates the destination's standing, in one transaction, only while the
 * lease is still this sender's. Null when it is not; otherwise since when the chain has been
 * failing, and whether the cursor moved.
 */
export function recordProgress(db: Database, p: Progress): Promise<{ failingSince: Date | null; moved: boolean } | null> {
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows: [held] } = await tx.query<{ id: string }>(
      `select id from event_destinations where id = $1 and lease_owner = $2 for no key update`, [p.destinationId, p.owner]);
    if (!held) return null;
    const { rows: [cursor] } = await tx.query<{ failing_since: Date | null }>(
      `update event_destination_cursors c
          set last_seq = $3, attempts = $4, next_attempt_at = $5,
              failing_since = case when $6 then coalesce(c.failing_since, $8) end
        where c.destination_id = $1 and c.chain_id = $2 and c.generation = $7
        returning c.failing_since`,
      [p.destinationId, p.chainId, p.lastSeq, p.failure?.attempts ?? 0, p.failure?.nextAttemptAt ?? null, p.failure !== null, p.generation, p.now],
    );
    if (p.attempts.length > 0) {
      const a = p.attempts;
      await tx.query(
        `insert into event_deliveries (destination_id, entry_id, org_id, seq, action, attempt, outcome, response_status, error, duration_ms)
         select $1, * from unnest($2::uuid[], $3::uuid[], $4::bigint[], $5::text[], $6::int[], $7::text[], $8::int[], $9::text[], $10::int[])`,
        [p.destinationId, a.map((x) => x.entryId), a.map((x) => x.orgId), a.map((x) => x.seq), a.map((x) => x.action), a.map((x) => x.attempt),
          a.map((x) => x.outcome), a.map((x) => x.responseStatus), a.map((x) => x.error?.slice(0, 1024) ?? null), a.map((x) => x.durationMs)],
      );
    }
    const delivered = p.attempts.some((x) => x.outcome === 'delivered');
    // A success ends `failing` unless another of its chains is still held back by a failure 24 hours old.
    await tx.query(
      `update event_destinations set
          last_success_at = case when $2 then $4 else last_success_at end,
          last_failure_at = case when $3::text is not null then $4 else last_failure_at end,
          last_error = coalesce($3, last_error),
          failing = case when $3::text is null and $2
                           and not exists (select 1 from event_destination_cursors c
                                            where c.destination_id = $1 and c.chain_id <> $5
                                              and c.failing_since <= $4::timestamptz - $6 * interval '1 millisecond')
                         then false else failing end
        where id = $1`,
      [p.destinationId, delivered, p.failure?.error.slice(0, 1024) ?? null, p.now, p.chainId, FAILING_AFTER_MS],
    );
    return { failingSince: cursor?.failing_since ?? null, moved: cursor !== undefined };
  });
}

/** Marks the destination failing; false when it already was. */
export async function setFailing(tx: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await tx.query(`update event_destinations set failing = true where id = $1 and not failing`, [id]);
  return rowCount > 0;
}

export async function leasedSecrets(tx: Queryable, id: string): Promise<LeasedDestination | null> {
  const { rows } = await tx.query<LeasedDestination>(`select ${LEASED_COLUMNS} from event_destinations d where d.id = $1`, [id]);
  return rows[0] ?? null;
}

/** The delivery log keeps a week (API.md §9), deleted in bounded batches. */
export async function pruneDeliveries(db: Database, before: Date): Promise<void> {
  for (;;) {
    const removed = await withTenant(db, SYSTEM_SCOPE, async (tx) => {
      const { rowCount } = await tx.query(
        `delete from event_deliveries where id in (select id from event_deliveries where attempted_at < $1 limit 5000)`, [before]);
      return rowCount;
    });
    if (removed < 5000) return;
  }
}
