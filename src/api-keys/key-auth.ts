// The X-API-Key hot path (SPEC "Authentication" 4, DESIGN.md §5): hash the key, find it in a
// short-lived cache, check status and expiry, then (after the route's guards) take one step in the
// sliding window and queue the usage. Any change to a key clears it from every instance's cache:
// at once here through the bus, and on the other instances through the key's version in the Redis
// rate-limit script, which is read in the same round trip as the window step, so a key revoked or
// rotated on one instance is refused by the next request anywhere.
import type { FastifyReply } from 'fastify';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { apiKeyInactive, AppError } from '../errors.js';
import type { ApiKeyAuthenticator, Caller } from '../http/auth.js';
import type { InvalidationBus } from '../coordination/invalidation-bus.js';
import { hashKey, malformedKeyReason } from './key-material.js';
import { findKeyForAuth, markExpired, type KeyAuthRow } from './api-keys.repo.js';
import type { RateDecision, RateLimitStore } from './rate-limiter.js';
import type { UsageRecorder } from './usage-recorder.js';

/** Channel on which a changed key's id is announced. */
export const API_KEY_CHANGED = 'api-keys';
/** Channel on which partner, organization and user changes are announced (identity/callers.ts). */
const IDENTITY_CHANGED = 'identity';

const CACHE_TTL_MS = 10_000;
const CACHE_MAX_ENTRIES = 50_000;

interface CachedKey {
  row: KeyAuthRow;
  hash: string;
  caller: Caller;
  loadedAt: number;
}

const keyOfCaller = new WeakMap<Caller, CachedKey>();

function callerOf(row: KeyAuthRow): Caller {
  const orgIds = [row.org_id];
  return {
    kind: 'api_key',
    id: row.id,
    userId: null,
    email: null,
    name: row.name,
    scope: 'organization',
    partnerId: row.partner_id,
    orgId: row.org_id,
    role: null,
    permissions: new Set(row.scopes),
    mfaEnabled: false,
    mfaVerified: false,
    accessibleOrgIds: orgIds,
    canAccessOrg: (orgId) => orgId === row.org_id,
    partnerStatus: row.partner_status,
    orgStatus: row.org_status,
    sessionId: null,
    tenant: { scope: 'organization', partnerId: row.partner_id, orgIds },
  };
}

function rateHeaders(reply: FastifyReply, decision: RateDecision, now: number): void {
  reply.header('x-ratelimit-limit', decision.limit);
  reply.header('x-ratelimit-remaining', decision.remaining);
  reply.header('x-ratelimit-reset', Math.ceil(decision.resetAt / 1000));
  if (!decision.allowed) reply.header('retry-after', Math.max(1, Math.ceil((decision.resetAt - now) / 1000)));
}

export interface ApiKeyAuth extends ApiKeyAuthenticator {
  /** After a committed change: drop the key from every cache and tell other instances its version. */
  keyChanged(keyId: string, version: number): Promise<void>;
}

export function createApiKeyAuth(deps: {
  db: Database;
  store: RateLimitStore;
  usage: UsageRecorder;
  bus: InvalidationBus;
  now: () => number;
  /** A request refused by its key's rate limit (metrics). */
  onRateLimited?: () => void;
}): ApiKeyAuth {
  const byHash = new Map<string, CachedKey>();
  const hashById = new Map<string, string>();
  const loading = new Map<string, Promise<CachedKey | null>>();

  function forget(keyId: string) {
    const hash = hashById.get(keyId);
    if (hash !== undefined) byHash.delete(hash);
    hashById.delete(keyId);
  }
  deps.bus.subscribe(API_KEY_CHANGED, forget);
  deps.bus.subscribe(IDENTITY_CHANGED, () => {
    byHash.clear();
    hashById.clear();
  });

  async function load(hash: string): Promise<CachedKey | null> {
    const row = await withTenant(deps.db, SYSTEM_SCOPE, (tx) => findKeyForAuth(tx, hash));
    if (!row) return null;
    const entry: CachedKey = { row, hash, caller: callerOf(row), loadedAt: deps.now() };
    if (byHash.size >= CACHE_MAX_ENTRIES) {
      const [oldest, dropped] = byHash.entries().next().value!;
      byHash.delete(oldest);
      hashById.delete(dropped.row.id);
    }
    forget(row.id); // a rotated key's old hash goes with it
    byHash.set(hash, entry);
    hashById.set(row.id, hash);
    return entry;
  }

  async function lookup(hash: string, fresh: boolean): Promise<CachedKey | null> {
    const hit = byHash.get(hash);
    if (hit && !fresh && deps.now() - hit.loadedAt < CACHE_TTL_MS) return hit;
    // Concurrent first requests with one key share one database read.
    let pending = loading.get(hash);
    if (!pending) {
      pending = load(hash).finally(() => loading.delete(hash));
      loading.set(hash, pending);
    }
    return pending;
  }

  async function keyChanged(keyId: string, version: number): Promise<void> {
    deps.bus.publish(API_KEY_CHANGED, keyId);
    await deps.store.announceVersion(keyId, version);
  }

  return {
    keyChanged,

    async authenticate(value, _request, _reply, fresh) {
      const malformed = malformedKeyReason(value);
      if (malformed) throw new AppError('API_KEY_INVALID', malformed);
      const entry = await lookup(hashKey(value), fresh);
      if (!entry) throw new AppError('API_KEY_INVALID', 'API key is not valid');
      const { row } = entry;
      if (row.status !== 'active' || row.org_deleted) throw apiKeyInactive();
      if (row.expires_at !== null && row.expires_at.getTime() <= deps.now()) {
        const version = await withTenant(deps.db, SYSTEM_SCOPE, (tx) => markExpired(tx, row.id));
        if (version !== null) await keyChanged(row.id, version);
        else forget(row.id);
        throw apiKeyInactive();
      }
      keyOfCaller.set(entry.caller, entry);
      return entry.caller;
    },

    async admit(caller, _request, reply, final) {
      const entry = keyOfCaller.get(caller)!;
      const now = deps.now();
      const decision = await deps.store.take(entry.row.id, entry.row.rate_limit, final ? Number.MAX_SAFE_INTEGER : entry.row.version, now, entry.hash);
      if (decision === 'stale') {
        forget(entry.row.id);
        return false;
      }
      rateHeaders(reply, decision, now);
      if (!decision.allowed) {
        deps.onRateLimited?.();
        const wait = Math.max(1, Math.ceil((decision.resetAt - now) / 1000));
        throw new AppError('RATE_LIMITED', `API key rate limit of ${decision.limit} requests per hour exceeded; retry in ${wait} seconds`);
      }
      // Counted with the admission by a shared store (Redis); else in this instance's memory.
      if (!decision.counted) deps.usage.record(entry.hash, now);
      return true;
    },

    async describe(caller, reply) {
      const entry = keyOfCaller.get(caller);
      if (!entry) return;
      const now = deps.now();
      try {
        rateHeaders(reply, await deps.store.peek(entry.row.id, entry.row.rate_limit, now), now);
      } catch {
        // Headers are informative here; the refusal being sent matters more.
      }
    },
  };
}
