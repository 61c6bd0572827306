// One interface over PostgreSQL (pg pool) and embedded PGlite. Both run the same SQL, the same
// migrations and the same row-level security; the service always acts as APP_ROLE, never as the
// owner of the schema. On PostgreSQL it logs in as that role (and the audit log's two privileged
// roles log in on their own connections), so no request can switch to anyone stronger; PGlite is
// one superuser connection that switches roles (DESIGN.md §3).
import path from 'node:path';
import type { AuditRole, Database, DatabaseOptions } from './connection.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

export * from './connection.js';
export { connectPostgres } from './postgres.js';
export { embeddedDatabaseDump } from './pglite.js';

/** Which login a transaction ran on: the request pool's, or one of the audit log's own. */
export type TransactionLogin = 'app' | AuditRole;

/**
 * The same database, telling `done` how long each transaction took and whether it committed (for
 * metrics): two clock reads per transaction, which itself costs at least one round trip.
 */
export function observeTransactions(inner: Database, done: (login: TransactionLogin, seconds: number, committed: boolean) => void): Database {
  const timed = <T>(login: TransactionLogin, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    return run().then(
      (result) => {
        done(login, (performance.now() - started) / 1000, true);
        return result;
      },
      (err: unknown) => {
        done(login, (performance.now() - started) / 1000, false);
        throw err;
      },
    );
  };
  return {
    ...inner,
    transaction: (fn, options) => timed('app', () => inner.transaction(fn, options)),
    privilegedTransaction: (role, fn) => timed(role, () => inner.privilegedTransaction(role, fn)),
    ping: () => inner.ping(),
    usage: () => inner.usage(),
    close: () => inner.close(),
  };
}

/** Opens the database named by the options, applying pending migrations first. */
export function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options) : openPglite(options);
}

export function pgliteDirFor(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}
