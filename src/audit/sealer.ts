// The sealer (DESIGN.md §4): places committed pending rows into their chain in batches, so the
// per-chain lock is held for one short transaction per batch instead of across every request's
// commit. One sealer per chain at a time across instances (SKIP LOCKED on the chain head); woken
// after each commit that recorded something, and by a timer for anything missed. Pending rows
// come off the chain's queue in insertion order; sealing appends a narrow row per entry.
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import * as repo from './audit.repo.js';
import { pendingBacklog, type PendingBacklog } from './backlog.repo.js';
import { sealRows } from './hash-chain.js';
import { SEALER, withAuditPrivilege } from './privilege.js';

const BATCH = 2000;
const TICK_MS = 250;

export interface Sealer {
  wake(): void;
  /** Seals everything pending now (tests, shutdown). */
  sealNow(): Promise<void>;
  /**
   * What waits to be sealed, over every chain and instance: the `top` chains waiting longest.
   * Read on a request connection, never the sealer's own, so metrics never delay a seal.
   */
  backlog(top: number): Promise<PendingBacklog>;
  start(): void;
  stop(): Promise<void>;
}

export function toChainFields(row: repo.ChainRow) {
  return {
    orgId: row.org_id,
    timestamp: row.ts,
    actorType: row.actor_type,
    actorId: row.actor_id,
    actorEmail: row.actor_email,
    action: row.action,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    resourceName: row.resource_name,
    details: row.details,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    result: row.result,
    errorMessage: row.error_message,
  };
}

/** The head a sealed batch left its chain at. */
export interface SealedHead {
  orgId: string | null;
  seq: number;
  checksum: string;
}

export function createSealer(deps: {
  db: Database;
  log: (err: unknown, message: string) => void;
  /** Runs inside the sealing transaction after the head moved (signed checkpoints): commits or rolls back with the batch. */
  onSealed?: (tx: Transaction, head: SealedHead) => Promise<void>;
}): Sealer {
  let running: Promise<void> | null = null;
  let again = false;
  let scheduled = false;
  let timer: NodeJS.Timeout | null = null;

  /** Seals one batch of a chain; returns how many rows it sealed, or 'busy' when another sealer holds the chain. */
  async function sealBatch(chainId: string, orgId: string | null): Promise<number | 'busy'> {
    return withAuditPrivilege(deps.db, SEALER, async (tx) => {
      const head = await repo.lockChainHead(tx, chainId, orgId);
      if (!head) return 'busy';
      const rows = await repo.pendingRows(tx, chainId, BATCH);
      if (rows.length === 0) return 0;
      const seals = sealRows({ seq: head.last_seq, checksum: head.last_checksum }, rows.map(toChainFields));
      // Appended, never an update of the wide rows: their indexes, the trigram one included, are left alone.
      await repo.appendSeals(tx, chainId, orgId, seals.map((s, i) => ({ pendingOrder: rows[i]!.pending_order, ...s })));
      const last = seals[seals.length - 1]!;
      await deps.onSealed?.(tx, { orgId, seq: last.seq, checksum: last.checksum });
      return rows.length;
    });
  }

  /**
   * Seals every chain with pending rows. A chain another sealer holds is skipped, unless
   * `waitForBusy` (sealNow): then it is retried until it is free and empty.
   */
  async function sealAll(waitForBusy: boolean): Promise<void> {
    const chains = await withAuditPrivilege(deps.db, SEALER, repo.chainsWithPendingRows);
    for (const chain of chains) {
      for (;;) {
        const sealed = await sealBatch(chain.chain_id, chain.org_id);
        if (sealed === 'busy') {
          if (!waitForBusy) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        } else if (sealed < BATCH) break;
      }
    }
  }

  function run(waitForBusy = false): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await sealAll(waitForBusy);
        } while (again);
      } catch (err) {
        deps.log(err, 'audit sealer failed; retrying on the next tick');
      } finally {
        running = null;
      }
    })();
    return running;
  }

  return {
    wake() {
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        void run();
      });
    },
    backlog: (top) => withTenant(deps.db, SYSTEM_SCOPE, (tx) => pendingBacklog(tx, top)),
    async sealNow() {
      // Let any run in progress finish, then run once more waiting for busy chains. Nothing else can
      // start a run between the check and the call: both happen in one turn of the event loop.
      while (running) await running;
      await run(true);
    },
    start() {
      timer ??= setInterval(() => void run(), TICK_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
