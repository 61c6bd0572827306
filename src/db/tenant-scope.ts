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

export async function withTenant<T>(db: Database, scope: TenantScope, fn: (tx: Transaction) => Promise<T>, options?: { readOnly?: boolean }): Promise<T> {
  // On PostgreSQL the login is the app role and nothing more (postgres.ts refuses any other at
  // start-up), so there is no role to switch to: setting it anyway cost ~5% of PostgreSQL's CPU on
  // the device list. PGlite's one superuser connection must switch.
  return db.transaction(fn, { setup: scopeStatement(db.kind === 'pglite' ? db.appRole : null, scope), ...options });
}

/** withTenant for work that only reads (TransactionOptions.readOnly): the hot lists and lookups. */
export function readTenant<T>(db: Database, scope: TenantScope, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return withTenant(db, scope, fn, { readOnly: true });
}

/**
 * The statement that sets the scope transaction-locally, and the role to switch to (null: the login
 * already is it). A prepared statement like any other: PostgreSQL sends it in BEGIN's write, ahead
 * of the transaction's first statement (postgres-transactions.ts).
 */
export function scopeStatement(role: string | null, scope: TenantScope): { text: string; params: unknown[] } {
  const orgIds = scope.scope === 'system' ? [] : scope.orgIds;
  const partnerId = scope.scope === 'system' ? '' : scope.partnerId;
  const allOrgs = scope.scope === 'partner' && scope.allOrgs;
  const settings = [scope.scope, `{${orgIds.join(',')}}`, partnerId, allOrgs ? 'true' : 'false'];
  return role === null
    ? { text: SCOPE_SQL, params: settings }
    : { text: ROLE_AND_SCOPE_SQL, params: [...settings, role] };
}

const SCOPE_SQL = `select set_config('app.scope', $1, true), set_config('app.org_ids', $2, true), set_config('app.partner_id', $3, true), set_config('app.partner_all', $4, true)`;
const ROLE_AND_SCOPE_SQL = `select set_config('role', $5, true), set_config('app.scope', $1, true), set_config('app.org_ids', $2, true), set_config('app.partner_id', $3, true), set_config('app.partner_all', $4, true)`;

/**
 * Sets role and scope transaction-locally, in one statement, inside a transaction already open (a
 * scope that changes mid-transaction). On PostgreSQL the login already is the role (switching to
 * oneself is all it can do); PGlite's one superuser connection needs it.
 */
export async function applyTenantScope(tx: Queryable, role: string, scope: TenantScope): Promise<void> {
  const { text, params } = scopeStatement(role, scope);
  await tx.query(text, params);
}
