// Embedded PGlite: one superuser connection, in process, that drops to the app role for good and
// switches to the audit roles itself. Transactions queue for it; short of disk space only
// read-only ones run (storage-full.ts); its files can be copied whole between two transactions.
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import pg from 'pg';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { databaseUnavailable, storageFull } from '../errors.js';
import { APP_ROLE, DEFAULT_MIGRATIONS_DIR, runAfterCommit, type Database, type DatabaseOptions, type Queryable } from './connection.js';
import { migrate, migrationConnection } from './migrate.js';
import { createStorageGuard, isStorageFull, READ_ONLY_SQL_TRANSACTION } from './storage-full.js';

/** PGlite: its one connection is a superuser, so only the role it switched to can be checked. */
async function assertRoleCannotBypassRls(tx: Queryable): Promise<void> {
  const { rows } = await tx.query<{ role: string; rolsuper: boolean; rolbypassrls: boolean }>(
    `select current_user as role, r.rolsuper, r.rolbypassrls from pg_roles r where r.rolname = current_user`,
  );
  const role = rows[0];
  if (!role || role.rolsuper || role.rolbypassrls) {
    throw new Error(`refusing to start: database role "${role?.role ?? '?'}" bypasses row-level security`);
  }
}

/** Open embedded databases by directory: each one's files, copied between two transactions. */
const embeddedDumps = new Map<string, () => Promise<Blob>>();

/**
 * A tarball (uncompressed) of the files of the embedded database open in this process at `dir`,
 * or null. Taken holding PGlite's transaction lock, which every transaction holds from BEGIN to
 * COMMIT: the copy has every committed transaction and nothing of one in progress (embedded-backup.ts).
 */
export function embeddedDatabaseDump(dir: string): (() => Promise<Blob>) | null {
  return embeddedDumps.get(path.resolve(dir)) ?? null;
}

/**
 * A transaction's setup as one simple-protocol statement, its values written in as escaped literals:
 * in process, the same statement with parameters cost PGlite ~30 µs more per transaction (~7%).
 */
function withLiterals(text: string, params: unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = params[Number(n) - 1];
    return value === null || value === undefined ? 'NULL' : pg.escapeLiteral(String(value));
  });
}

export async function openPglite(options: DatabaseOptions): Promise<Database> {
  const dir = options.pgliteDir;
  if (!dir.startsWith('memory://')) mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir, {
    extensions: { pg_trgm },
    parsers: { [pgliteTypes.DATE]: (v: string) => v },
  });
  let closed = false;
  const connection = migrationConnection(
    (sql) => db.exec(sql),
    async (sql, params) => (await db.query<Record<string, unknown>>(sql, params as unknown[])).rows,
  );
  await migrate(connection, options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR, options.log);
  // PGlite has one connection and it is a superuser: drop to the app role for good.
  const appRole = options.appRole ?? APP_ROLE;
  await db.query(`select set_config('role', $1, false)`, [appRole]);

  // PGlite serialises transactions itself (one connection), so concurrent requests queue here.
  let inFlight = 0;
  // Short of disk space, only read-only transactions (storage-full.ts: PGlite hangs on a WAL PANIC).
  const storage = dir.startsWith('memory://') ? null : createStorageGuard(dir);
  const dump = () => db._runExclusiveTransaction(() => db.dumpDataDir('none'));
  const database: Database = {
    kind: 'pglite',
    appRole,
    connection: null,
    // One superuser connection: the privileged roles are reached by SET ROLE, like the app role.
    privilegedTransaction: (_role, fn) => database.transaction(fn),
    async transaction(fn, txOptions) {
      if (closed) throw databaseUnavailable(new Error('the embedded database is closed'));
      const readOnly = (await storage?.low()) ?? false;
      const committed: (() => void)[] = [];
      inFlight++;
      let result: Awaited<ReturnType<typeof fn>>;
      try {
        result = await db.transaction(async (ptx) => {
          if (readOnly) await ptx.exec('set transaction read only');
          if (txOptions?.setup) await ptx.exec(withLiterals(txOptions.setup.text, txOptions.setup.params));
          // queryLater: no round trip to save in process; the statements still run in order, before
          // the next statement or the commit, and fail the transaction there.
          const later: [string, unknown[]][] = [];
          const runLater = async () => {
            for (let next = later.shift(); next; next = later.shift()) await ptx.query(next[0], next[1]);
          };
          const value = await fn({
            async query(text, params, options) {
              await runLater();
              const result = await ptx.query<never>(text, params as unknown[], options?.rowMode ? { rowMode: options.rowMode } : undefined);
              return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
            },
            queryLater: (text, params) => later.push([text, params ?? []]),
            afterCommit: (cb) => committed.push(cb),
          });
          await runLater();
          return value;
        });
      } catch (err) {
        if (readOnly && (err as { code?: unknown }).code === READ_ONLY_SQL_TRANSACTION) throw storageFull(err);
        if (isStorageFull(err)) storage?.recheck();
        throw err;
      } finally {
        inFlight--;
      }
      runAfterCommit(committed);
      return result;
    },
    async ping() {
      await database.transaction((tx) => tx.query('select 1'));
    },
    usage: () => ({ kind: 'pglite', queued: Math.max(0, inFlight - 1) }),
    async close() {
      closed = true;
      if (embeddedDumps.get(path.resolve(dir)) === dump) embeddedDumps.delete(path.resolve(dir));
      await db.close();
    },
  };
  try {
    await database.transaction(assertRoleCannotBypassRls);
  } catch (err) {
    await db.close();
    throw err;
  }
  if (!dir.startsWith('memory://')) embeddedDumps.set(path.resolve(dir), dump);
  return database;
}
