// The two ways past the audit log's append-only triggers (SPEC integrity rule 3, DESIGN.md §4):
// each is a role of its own plus an explicit setting. On PostgreSQL the role is reached only
// through its own login (the request pool's login is a member of nothing, so it cannot switch to
// either); on PGlite's one connection it is switched to, transaction-locally.
import type { Database, Transaction } from '../db/database.js';
import { applyTenantScope, SYSTEM_SCOPE } from '../db/tenant-scope.js';

export const SEALER = { role: 'dms_audit_sealer', setting: 'app.audit_seal' } as const;
export const RETENTION = { role: 'dms_audit_retention', setting: 'app.audit_retention' } as const;

export function withAuditPrivilege<T>(db: Database, privilege: typeof SEALER | typeof RETENTION, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.privilegedTransaction(privilege.role, async (tx) => {
    await applyTenantScope(tx, privilege.role, SYSTEM_SCOPE);
    await tx.query(`select set_config($1, 'on', true)`, [privilege.setting]);
    return fn(tx);
  });
}
