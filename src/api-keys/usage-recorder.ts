// SPEC "Authentication" 4 (7): usage is recorded asynchronously. Admitted requests are counted in
// memory per key and added in one statement every second (`usage_count = usage_count + n`), so no
// increment is lost to a race between instances; a failed flush keeps its counts for the next one,
// and shutdown flushes what is left. Counts are keyed by the key's hash, so requests made with a
// key's old material never land on the rotated key (rotation resets usage).
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { addUsage } from './api-keys.repo.js';

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

export function createUsageRecorder(deps: { db: Database; log: (err: unknown, message: string) => void; intervalMs?: number }): UsageRecorder {
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

  const flush = () => (flushing = flushing.then(write));

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
