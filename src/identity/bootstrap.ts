// On a database with no users, create the first system-scope admin (API.md §1).
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { hashPassword } from './passwords.js';
import { countUsers, insertUser, lockBootstrap } from './users.repo.js';

export interface BootstrapResult {
  email: string;
  /** Set only when the password was generated, so the operator can be told it once. */
  generatedPassword: string | null;
}

export async function ensureBootstrapAdmin(
  db: Database,
  options: { email: string | null; password: string | null },
): Promise<BootstrapResult | null> {
  const email = options.email ?? 'admin@localhost';
  if ((await withTenant(db, SYSTEM_SCOPE, countUsers)) > 0) return null;
  const generatedPassword = options.password ? null : randomBytes(18).toString('base64url');
  const passwordHash = await hashPassword(options.password ?? generatedPassword!);
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    // Two instances starting on an empty database must not both create an admin.
    await lockBootstrap(tx);
    if ((await countUsers(tx)) > 0) return null;
    await insertUser(tx, {
      email,
      name: 'Administrator',
      passwordHash,
      scope: 'system',
      partnerId: null,
      orgId: null,
      role: 'admin',
      orgAccess: 'none',
      orgIds: [],
    });
    return { email, generatedPassword };
  });
}
