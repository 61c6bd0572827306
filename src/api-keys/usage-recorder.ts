// SPEC "Authentication" 4 (7): usage is recorded asynchronously, and added to api_keys every second
// in one statement (`usage_count = usage_count + n`), so no increment is lost to a race between
// instances. Counts are keyed by the key's hash, so requests made with a key's old material never
// land on the rotated key (rotation resets usage).
// With Redis, the rate-limit step that admits a request also counts it there, and each flush takes
// the counts out as a batch whose id is recorded with them (applyUsageBatch): a batch left by an
// instance killed mid-flush is applied by another, once, so usage stays exact across a SIGKILL.
// Without Redis (or while it is down) admissions are counted in this instance's memory; a failed
// flush keeps them for the next one, and shutdown flushes what is left.
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { addUsage, applyUsageBatch } from './api-keys.repo.js';
import type { RateLimitStore } from './rate-limiter.js';

interface PendingUsage {
  count: number;
  lastUsedAt: number;
}

export interface UsageRecorder {
  record(keyHash: string, at: number): void;
  flush(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export function createUsageRecorder(deps: {
  db: Database;
  log: (err: unknown, message: string) => void;
  /** The rate-limit store, when it counts usage itself (Redis). */
  store?: Pick<RateLimitStore, 'claimUsage' | 'settleUsage'>;
  now?: () => number;
  intervalMs?: number;
}): UsageRecorder {
  const now = deps.now ?? Date.now;
  let pending = new Map<string, PendingUsage>();
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();

  function merge(into: Map<string, PendingUsage>, hash: string, usage: PendingUsage) {
    const entry = into.get(hash);
    if (entry) {
      entry.count += usage.count;
      entry.lastUsedAt = Math.max(entry.lastUsedAt, usage.lastUsedAt);
    } else into.set(hash, { ...usage });
  }

  async function write(): Promise<void> {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    // Sorted, so two instances flushing the same keys lock them in the same order.
    const entries = [...batch].sort(([a], [b]) => (a < b ? -1 : 1));
    try {
      await withTenant(deps.db, SYSTEM_SCOPE, (tx) => addUsage(tx, entries.map(([hash, u]) => ({ hash, count: u.count, lastUsedAt: new Date(u.lastUsedAt) }))));
    } catch (err) {
      for (const [hash, usage] of batch) merge(pending, hash, usage);
      deps.log(err, `could not write API key usage for ${batch.size} keys; retrying on the next flush`);
    }
  }

  /** Batches counted by the store: each applied once, then forgotten; a failure leaves it to a later claim. */
  async function moveStoreCounts(): Promise<void> {
    const { claimUsage, settleUsage } = deps.store ?? {};
    if (!claimUsage || !settleUsage) return;
    let batches;
    try {
      batches = await claimUsage(now());
    } catch (err) {
      return deps.log(err, 'could not take API key usage from Redis; it stays there for the next flush');
    }
    for (const batch of batches) {
      try {
        await withTenant(deps.db, SYSTEM_SCOPE, (tx) => applyUsageBatch(tx, batch.id, batch.usage));
        await settleUsage(batch.id);
      } catch (err) {
        deps.log(err, `could not add API key usage batch ${batch.id}; it is retried once its claim runs out`);
      }
    }
  }

  const flush = () => (flushing = flushing.then(write).then(moveStoreCounts));

  return {
    record(keyHash, at) {
      const entry = pending.get(keyHash);
      if (entry) {
        entry.count++;
        if (at > entry.lastUsedAt) entry.lastUsedAt = at;
      } else pending.set(keyHash, { count: 1, lastUsedAt: at });
    },
    flush,
    start() {
      timer ??= setInterval(() => void flush(), deps.intervalMs ?? 1000).unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await flush();
    },
  };
}
