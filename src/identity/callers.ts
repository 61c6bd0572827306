// Turns an access token into a Caller. The caller record (user, session state, partner and
// organization status, reachable organizations) is cached per session for a few seconds, because
// this runs on every request; any change to users, sessions, partners or organizations clears the
// cache on every instance through the invalidation bus.
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant, type TenantScope } from '../db/tenant-scope.js';
import { accessTokenInvalid } from '../errors.js';
import type { Authenticator, Caller } from '../http/auth.js';
import type { InvalidationBus } from '../coordination/invalidation-bus.js';
import { permissionsOf } from './permissions.js';
import { loadCallerRecord, type CallerRecord } from './sessions.repo.js';
import type { TokenService } from './tokens.js';

/** Channel on which identity-relevant changes are announced; any message clears caller caches. */
export const IDENTITY_CHANGED = 'identity';

const CACHE_TTL_MS = 10_000;
const CACHE_MAX_ENTRIES = 50_000;

export function callerFromRecord(record: CallerRecord, sessionId: string, mfaVerified: boolean): Caller {
  const reachable = record.scope === 'system' ? null : record.org_ids;
  const reachableSet = reachable === null ? null : new Set(reachable);
  let tenant: TenantScope;
  if (record.scope === 'system') tenant = SYSTEM_SCOPE;
  else if (record.scope === 'partner') {
    tenant = { scope: 'partner', partnerId: record.partner_id!, orgIds: record.org_ids, allOrgs: record.org_access === 'all' };
  } else tenant = { scope: 'organization', partnerId: record.partner_id!, orgIds: record.org_ids };
  return {
    kind: 'user',
    id: record.id,
    userId: record.id,
    email: record.email,
    name: record.name,
    scope: record.scope,
    partnerId: record.partner_id,
    orgId: record.org_id,
    role: record.role,
    permissions: permissionsOf(record.role),
    mfaEnabled: record.mfa_enabled,
    mfaVerified,
    accessibleOrgIds: reachable,
    canAccessOrg: (orgId) => reachableSet === null || reachableSet.has(orgId),
    partnerStatus: record.partner_status,
    orgStatus: record.org_status,
    sessionId,
    tenant,
  };
}

export interface CallerResolver {
  authenticateJwt: Authenticator;
  /** Drops every cached caller here and on the other instances. */
  announceChange(reason: string): void;
}

/**
 * A session's record and the Caller built from it. The Caller is immutable and shared by the
 * session's requests until the entry expires: building it (a Set, a closure, the tenant scope)
 * on every request cost more than the cache lookup.
 */
interface CachedSession {
  record: CallerRecord;
  expiresAt: number;
  caller: Caller | null;
}

export function createCallerResolver(deps: { db: Database; tokens: TokenService; bus: InvalidationBus; now: () => number }): CallerResolver {
  const cache = new Map<string, CachedSession>();
  deps.bus.subscribe(IDENTITY_CHANGED, () => cache.clear());

  async function session(sessionId: string): Promise<CachedSession | null> {
    const now = deps.now();
    const hit = cache.get(sessionId);
    if (hit && hit.expiresAt > now) return hit;
    const fresh = await withTenant(deps.db, SYSTEM_SCOPE, (tx) => loadCallerRecord(tx, sessionId));
    if (!fresh) return null;
    if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    const entry = { record: fresh, expiresAt: now + CACHE_TTL_MS, caller: null };
    cache.set(sessionId, entry);
    return entry;
  }

  return {
    async authenticateJwt(token) {
      const claims = await deps.tokens.verifyAccess(token);
      const found = await session(claims.sessionId);
      const now = deps.now();
      if (!found || found.record.id !== claims.userId || found.record.session_revoked_at !== null || found.record.session_expires_at.getTime() <= now) {
        throw accessTokenInvalid();
      }
      // A session's tokens all carry the same MFA claim; rebuild should one ever differ.
      if (found.caller?.mfaVerified !== claims.mfaVerified) found.caller = callerFromRecord(found.record, claims.sessionId, claims.mfaVerified);
      return found.caller;
    },
    announceChange(reason) {
      deps.bus.publish(IDENTITY_CHANGED, reason);
    },
  };
}
