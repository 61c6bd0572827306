// The tenant scope a transaction runs under. Row-level security policies read these settings, so
// a route that forgets a filter still cannot see another tenant's rows (DESIGN.md §3).
import type { Database, Queryable, Transaction } from './database.js';

export type TenantScope =
  | { readonly scope: 'system' }
  | {
      readonly scope: 'partner';
      readonly partnerId: string;
      /** Organizations the caller may reach. */
      readonly orgIds: readonly string[];
      /** True when the caller reaches every organization of its partner, including ones created later. */
      readonly allOrgs: boolean;
    }
  | { readonly scope: 'organization'; readonly partnerId: string; readonly orgIds: readonly string[] };

/** For work the service does on its own behalf (authentication, bootstrap, workers). */
export const SYSTEM_SCOPE: TenantScope = Object.freeze({ scope: 'system' });

export function withTenant<T>(db: Database, scope: TenantScope, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await applyTenantScope(tx, db.appRole, scope);
    return fn(tx);
  });
}

/**
 * Sets role and scope transaction-locally, in one statement. On PostgreSQL the login already is
 * the role (switching to oneself is all it can do); PGlite's one superuser connection needs it.
 */
export async function applyTenantScope(tx: Queryable, role: string, scope: TenantScope): Promise<void> {
  const orgIds = scope.scope === 'system' ? [] : scope.orgIds;
  const partnerId = scope.scope === 'system' ? '' : scope.partnerId;
  const allOrgs = scope.scope === 'partner' && scope.allOrgs;
  await tx.query(
    `select set_config('role', $1, true), set_config('app.scope', $2, true), set_config('app.org_ids', $3, true),
            set_config('app.partner_id', $4, true), set_config('app.partner_all', $5, true)`,
    [role, scope.scope, `{${orgIds.join(',')}}`, partnerId, allOrgs ? 'true' : 'false'],
  );
}
