// Pages of the site list, kept per reach (the set of organizations a caller reaches, or the whole
// platform) so a busy list does not count and sort the same sites on every request. Every change
// to a site, and every organization deletion, clears the cache here at once and on the other
// instances through the invalidation bus; entries also expire after a few seconds, which bounds
// staleness if a bus message is lost (the rule the caller cache follows too).
import type { InvalidationBus } from '../coordination/invalidation-bus.js';
import type { PaginatedResult } from '../http/pagination.js';

export const SITES_CHANGED = 'tenancy.sites';
const TTL_MS = 5_000;
const MAX_ENTRIES = 5_000;

export interface SiteListCache<T> {
  /** The cached page for this reach, or undefined. `orgIds` null: every organization (system scope). */
  get(orgIds: readonly string[] | null, page: number, limit: number): PaginatedResult<T> | undefined;
  set(orgIds: readonly string[] | null, page: number, limit: number, value: PaginatedResult<T>): void;
  /** After a committed change to sites or organizations: clears every instance's cache. */
  changed(): void;
}

/** `clearOn`: further bus channels that clear it (identity changes: an organization deleted, a reach changed). */
export function createSiteListCache<T>(deps: { bus: InvalidationBus; now: () => number; clearOn?: string[] }): SiteListCache<T> {
  const entries = new Map<string, { value: PaginatedResult<T>; expiresAt: number }>();
  // Callers keep their reach array while cached, so its key is built once, not per request.
  const reachKeys = new WeakMap<readonly string[], string>();
  for (const channel of [SITES_CHANGED, ...(deps.clearOn ?? [])]) deps.bus.subscribe(channel, () => entries.clear());

  const keyOf = (orgIds: readonly string[] | null, page: number, limit: number) => {
    let reach = orgIds === null ? '*' : reachKeys.get(orgIds);
    if (reach === undefined) {
      reach = [...orgIds!].sort().join(',');
      reachKeys.set(orgIds!, reach);
    }
    return `${page}/${limit}/${reach}`;
  };

  return {
    get(orgIds, page, limit) {
      const key = keyOf(orgIds, page, limit);
      const hit = entries.get(key);
      if (!hit) return undefined;
      if (hit.expiresAt > deps.now()) return hit.value;
      entries.delete(key);
      return undefined;
    },
    set(orgIds, page, limit, value) {
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(keyOf(orgIds, page, limit), { value, expiresAt: deps.now() + TTL_MS });
    },
    changed() {
      deps.bus.publish(SITES_CHANGED, 'changed');
    },
  };
}
