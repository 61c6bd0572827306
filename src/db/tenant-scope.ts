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

export async function withTenant<T>(db: Database, scope: TenantScope, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  // On PostgreSQL the login is the app role and nothing more (postgres.ts refuses any other at
  // start-up), so there is no role to switch to: setting it anyway cost ~5% of PostgreSQL's CPU on
  // the device list. PGlite's one superuser connection must switch.
  return db.transaction(fn, { setup: scopeSetup(db.kind === 'pglite' ? db.appRole : null, scope) });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ROLE = /^[a-z_][a-z0-9_]*$/;
const SCOPES = new Set(['system', 'partner', 'organization']);

function settings(role: string, scope: TenantScope): [string, string, string, string, string] {
  const orgIds = scope.scope === 'system' ? [] : scope.orgIds;
  const partnerId = scope.scope === 'system' ? '' : scope.partnerId;
  const allOrgs = scope.scope === 'partner' && scope.allOrgs;
  return [role, scope.scope, `{${orgIds.join(',')}}`, partnerId, allOrgs ? 'true' : 'false'];
}

/**
 * The scope as literal SQL, sent with BEGIN in one round trip (Database.transaction's `setup`), and
 * the role to switch to (null: the login already is it). Literal, so every value is checked to be
 * what it claims (a role name, uuids) before it is written into the statement; anything else
 * throws rather than reach the database.
 */
export function scopeSetup(role: string | null, scope: TenantScope): string {
  const orgIds = scope.scope === 'system' ? [] : scope.orgIds;
  const partnerId = scope.scope === 'system' ? '' : scope.partnerId;
  if ((role !== null && !ROLE.test(role)) || !SCOPES.has(scope.scope) || (partnerId !== '' && !UUID.test(partnerId)) || !orgIds.every((id) => UUID.test(id))) {
    throw new Error('refusing a tenant scope that is not made of role names and uuids');
  }
  const [r, s, o, p, a] = settings(role ?? '', scope);
  return `select ${role === null ? '' : `set_config('role', '${r}', true), `}set_config('app.scope', '${s}', true), set_config('app.org_ids', '${o}', true), ` +
    `set_config('app.partner_id', '${p}', true), set_config('app.partner_all', '${a}', true)`;
}

/**
 * Sets role and scope transaction-locally, in one statement, inside a transaction already open (a
 * scope that changes mid-transaction). On PostgreSQL the login already is the role (switching to
 * oneself is all it can do); PGlite's one superuser connection needs it.
 */
export async function applyTenantScope(tx: Queryable, role: string, scope: TenantScope): Promise<void> {
  await tx.query(
    `select set_config('role', $1, true), set_config('app.scope', $2, true), set_config('app.org_ids', $3, true),
            set_config('app.partner_id', $4, true), set_config('app.partner_all', $5, true)`,
    settings(role, scope),
  );
}
