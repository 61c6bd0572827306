// The per-key rate limit: a true sliding one-hour window (a log of admitted requests, not fixed
// buckets), behind two stores with the same semantics: in-process, and Redis (one atomic script,
// one round trip) when REDIS_URL is set, so every instance shares the window. API.md §5: a refused
// request takes nothing from the window; Reset is when the oldest request leaves it (when refused:
// when one more request becomes available).
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export const WINDOW_MS = 60 * 60 * 1000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the oldest request leaves the window (refused: when one more is allowed). */
  resetAt: number;
  /** The admission was also counted as the key's usage, in the same atomic step (Redis). */
  counted?: true;
}

/** API-key usage counted by the store, taken out in whole batches to be added to api_keys. */
export interface UsageBatch {
  id: string;
  usage: { hash: string; count: number; lastUsedAt: Date }[];
}

export interface RateLimitStore {
  /**
   * Takes one request from the key's window when the limit allows. 'stale': another instance has
   * changed the key since `version` (Redis only), so the caller must reload the key first.
   * `usageOf` (the key material's hash): the store may count the admission as usage (`counted`).
   */
  take(keyId: string, limit: number, version: number, now: number, usageOf?: string): Promise<RateDecision | 'stale'>;
  /** The window as it stands, taking nothing (for requests refused before the limiter). */
  peek(keyId: string, limit: number, now: number): Promise<RateDecision>;
  /** Tells the other instances the key is now at `version` (no-op in process: one instance). */
  announceVersion(keyId: string, version: number): Promise<void>;
  /**
   * Usage the store counted (Redis only): a fresh batch of what was counted since the last call,
   * plus batches claimed earlier and never settled (their instance died, or the database failed)
   * for longer than USAGE_BATCH_LEASE_MS; each stays claimed for that long.
   */
  claimUsage?(now: number): Promise<UsageBatch[]>;
  /** The batch's counts are in the database: forget it. */
  settleUsage?(batchId: string): Promise<void>;
  close(): Promise<void>;
}

export const USAGE_BATCH_LEASE_MS = 30_000;

/** The admitted requests of one key in the last hour, oldest first, in a growable ring. */
export class SlidingLog {
  private times = new Float64Array(8);
  private head = 0;
  size = 0;

  at(i: number): number {
    return this.times[(this.head + i) % this.times.length]!;
  }

  newest(): number {
    return this.size === 0 ? -Infinity : this.at(this.size - 1);
  }

  evict(cutoff: number): void {
    while (this.size > 0 && this.times[this.head]! <= cutoff) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
  }

  push(t: number): void {
    if (this.size === this.times.length) {
      const grown = new Float64Array(this.times.length * 2);
      for (let i = 0; i < this.size; i++) grown[i] = this.at(i);
      this.times = grown;
      this.head = 0;
    }
    this.times[(this.head + this.size) % this.times.length] = t;
    this.size++;
  }

  /** One limiter step: evict what left the window, then admit (and record, if consume) or refuse. */
  step(limit: number, now: number, consume: boolean): RateDecision {
    this.evict(now - WINDOW_MS);
    if (this.size < limit) {
      if (consume) this.push(now);
      const oldest = this.size > 0 ? this.at(0) : now;
      return { allowed: true, limit, remaining: limit - this.size, resetAt: oldest + WINDOW_MS };
    }
    // With a lowered limit more than one request may have to leave before the next is allowed.
    return { allowed: false, limit, remaining: 0, resetAt: this.at(this.size - limit) + WINDOW_MS };
  }
}

export function createMemoryRateLimitStore(): RateLimitStore & { sync(keyId: string, limit: number, now: number, consume: boolean): RateDecision } {
  const logs = new Map<string, SlidingLog>();
  let steps = 0;
  let sweptAt = 0;

  // Idle keys' logs are dropped now and then, so memory follows the keys in use this hour.
  function sweep(now: number) {
    sweptAt = now;
    for (const [id, log] of logs) if (log.newest() <= now - WINDOW_MS) logs.delete(id);
  }

  function sync(keyId: string, limit: number, now: number, consume: boolean): RateDecision {
    if (++steps % 4096 === 0 && now - sweptAt > 60_000) sweep(now);
    let log = logs.get(keyId);
    if (!log) {
      if (!consume) return { allowed: true, limit, remaining: limit, resetAt: now + WINDOW_MS };
      log = new SlidingLog();
      logs.set(keyId, log);
    }
    return log.step(limit, now, consume);
  }

  return {
    sync,
    take: async (keyId, limit, _version, now) => sync(keyId, limit, now, true),
    peek: async (keyId, limit, now) => sync(keyId, limit, now, false),
    announceVersion: async () => {},
    close: async () => {},
  };
}

// One limiter step per API key in the batch. KEYS: window list and version key of each step, then
// the pending-usage hash. ARGV: window, then per step: now, limit, cached version, consume (1/0),
// usage field (the key material's hash, or ''): an admission with a field is counted in the same
// step (count, and the latest time under field@), so usage is exactly the admissions. Returns three numbers per
// step: {-1, version, 0} when the caller's copy of the key is stale, else {allowed, size, resetAt}.
// The window is a list of admitted timestamps, oldest first: pushes and pops at the ends are O(1),
// about half the cost of a sorted set here. Timestamps never go below the newest one, so the list
// stays sorted whatever the skew between instances' clocks.
const STEPS_SCRIPT = `
local window = tonumber(ARGV[1])
local usage = KEYS[#KEYS]
local out = {}
for i = 1, (#KEYS - 1) / 2 do
  local log, ver, a = KEYS[2 * i - 1], KEYS[2 * i], 5 * i - 3
  local nowText = ARGV[a]
  local now, limit = tonumber(nowText), tonumber(ARGV[a + 1])
  local current = tonumber(redis.call('GET', ver) or '0')
  if current > tonumber(ARGV[a + 2]) then
    out[#out + 1] = -1; out[#out + 1] = current; out[#out + 1] = 0
  else
    local head = redis.call('LINDEX', log, 0)
    while head and tonumber(head) <= now - window do
      redis.call('LPOP', log)
      head = redis.call('LINDEX', log, 0)
    end
    local size = redis.call('LLEN', log)
    if size < limit then
      if ARGV[a + 3] == '1' then
        local t = nowText
        local tail = redis.call('LINDEX', log, -1)
        if tail and tonumber(tail) > now then t = tail end
        redis.call('RPUSH', log, t)
        redis.call('PEXPIRE', log, window)
        size = size + 1
        if not head then head = t end
        local field = ARGV[a + 4]
        if field ~= '' then
          redis.call('HINCRBY', usage, field, 1)
          local last = redis.call('HGET', usage, field .. '@')
          if not last or tonumber(last) < tonumber(t) then redis.call('HSET', usage, field .. '@', t) end
        end
      end
      if not head then head = nowText end
      out[#out + 1] = (ARGV[a + 3] == '1' and ARGV[a + 4] ~= '') and 2 or 1; out[#out + 1] = size; out[#out + 1] = tonumber(head) + window
    else
      out[#out + 1] = 0; out[#out + 1] = size; out[#out + 1] = tonumber(redis.call('LINDEX', log, size - limit)) + window
    end
  end
end
return out
`;

// Versions only ever grow, whatever order two announcements arrive in.
const ANNOUNCE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1
`;

// Takes the pending usage whole as a new batch (RENAME: admissions from now on start a new hash),
// and claims for USAGE_BATCH_LEASE_MS every batch whose claim ran out. KEYS: pending hash, batch
// index (sorted set by claim time). ARGV: now, lease, new batch id, batch key prefix.
const CLAIM_USAGE_SCRIPT = `
local now, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
local claimed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - lease)
for _, id in ipairs(claimed) do redis.call('ZADD', KEYS[2], now, id) end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], ARGV[4] .. ARGV[3])
  redis.call('ZADD', KEYS[2], now, ARGV[3])
  claimed[#claimed + 1] = ARGV[3]
end
return claimed
`;

type RateCommands = Redis & {
  dmsRateSteps(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
  dmsRateAnnounce(ver: string, version: number, ttl: number): Promise<number>;
  dmsClaimUsage(pending: string, index: string, now: number, lease: number, batchId: string, prefix: string): Promise<string[]>;
};

/** A batch hash ({hash: count, hash@: last used}) as counts per key material. */
function usageOfBatch(fields: Record<string, string>): UsageBatch['usage'] {
  return Object.keys(fields)
    .filter((field) => !field.endsWith('@'))
    .sort()
    .map((hash) => ({ hash, count: Number(fields[hash]), lastUsedAt: new Date(Number(fields[`${hash}@`] ?? 0)) }));
}

interface PendingStep {
  keyId: string;
  limit: number;
  version: number;
  now: number;
  consume: boolean;
  usageOf: string;
  resolve(result: RateDecision | 'stale'): void;
}

/**
 * The Redis store. The steps of all requests that reach the limiter in one turn of the event loop
 * go to Redis as one script call: each request still waits for exactly one round trip, but Redis
 * runs one script instead of dozens and the service parses one reply (at saturation this doubled
 * the rate the service sustains). When Redis cannot answer, each step falls back to the
 * in-process store (so the limit still holds per instance) and the outage is logged loudly, at
 * most every 10 s: never fail open silently, never a 500. The store owns the connection.
 * A batch spans many keys, so the store needs one Redis server (or a proxy), not Redis Cluster.
 */
export function createRedisRateLimitStore(redis: Redis, log: (message: string) => void, usageNamespace: string): RateLimitStore {
  // Usage keys are the database's own (deployment_identity): a Redis may serve several.
  const USAGE_PENDING = `dms:usage:${usageNamespace}:pending`;
  const USAGE_BATCHES = `dms:usage:${usageNamespace}:batches`;
  const USAGE_BATCH_PREFIX = `dms:usage:${usageNamespace}:batch:`;
  const client = redis as RateCommands;
  client.defineCommand('dmsRateSteps', { lua: STEPS_SCRIPT });
  client.defineCommand('dmsRateAnnounce', { numberOfKeys: 1, lua: ANNOUNCE_SCRIPT });
  client.defineCommand('dmsClaimUsage', { numberOfKeys: 2, lua: CLAIM_USAGE_SCRIPT });
  const fallback = createMemoryRateLimitStore();
  let warnedAt = 0;
  let queue: PendingStep[] = [];
  const versionKey = (keyId: string) => `dms:ratelimit:${keyId}:version`;

  function degraded(err: unknown) {
    const now = Date.now();
    if (now - warnedAt < 10_000) return;
    warnedAt = now;
    log(`Redis rate-limit store unavailable (${(err as Error).message}); limiting per instance in process until it answers`);
  }

  async function send(batch: PendingStep[]): Promise<void> {
    const keys: string[] = [];
    const args: (string | number)[] = [WINDOW_MS];
    for (const p of batch) {
      keys.push(`dms:ratelimit:${p.keyId}:log`, versionKey(p.keyId));
      args.push(p.now, p.limit, p.version, p.consume ? '1' : '0', p.usageOf);
    }
    keys.push(USAGE_PENDING);
    try {
      const out = await client.dmsRateSteps(keys.length, ...keys, ...args);
      batch.forEach((p, i) => {
        const [allowed, size, resetAt] = [out[3 * i]!, out[3 * i + 1]!, out[3 * i + 2]!];
        if (allowed === -1) return p.resolve('stale');
        const decision: RateDecision = { allowed: allowed >= 1, limit: p.limit, remaining: Math.max(0, p.limit - size), resetAt };
        if (allowed === 2) decision.counted = true;
        p.resolve(decision);
      });
    } catch (err) {
      degraded(err);
      for (const p of batch) p.resolve(fallback.sync(p.keyId, p.limit, p.now, p.consume));
    }
  }

  function step(keyId: string, limit: number, version: number, now: number, consume: boolean, usageOf = ''): Promise<RateDecision | 'stale'> {
    return new Promise((resolve) => {
      if (queue.length === 0) {
        setImmediate(() => {
          const batch = queue;
          queue = [];
          void send(batch);
        });
      }
      queue.push({ keyId, limit, version, now, consume, usageOf, resolve });
    });
  }

  return {
    take: (keyId, limit, version, now, usageOf) => step(keyId, limit, version, now, true, usageOf),
    peek: async (keyId, limit, now) => (await step(keyId, limit, Number.MAX_SAFE_INTEGER, now, false)) as RateDecision,
    async claimUsage(now) {
      const ids = await client.dmsClaimUsage(USAGE_PENDING, USAGE_BATCHES, now, USAGE_BATCH_LEASE_MS, randomUUID(), USAGE_BATCH_PREFIX);
      return Promise.all(ids.map(async (id) => ({ id, usage: usageOfBatch(await redis.hgetall(USAGE_BATCH_PREFIX + id)) })));
    },
    async settleUsage(batchId) {
      await redis.multi().del(USAGE_BATCH_PREFIX + batchId).zrem(USAGE_BATCHES, batchId).exec();
    },
    async announceVersion(keyId, version) {
      try {
        await client.dmsRateAnnounce(versionKey(keyId), version, 24 * WINDOW_MS);
      } catch (err) {
        degraded(err);
      }
    },
    close: async () => {
      redis.disconnect();
    },
  };
}
