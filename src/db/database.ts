// One interface over PostgreSQL (pg pool) and embedded PGlite. Both run the same SQL, the same
// migrations and the same row-level security; the service always acts as APP_ROLE, never as the
// superuser that owns the schema.
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { AppError, databaseUnavailable } from '../errors.js';
import { migrate, migrationConnection } from './migrate.js';

/** The non-superuser role every request runs as; created by the first migration. */
export const APP_ROLE = 'dms_app';

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface QueryOptions {
  /**
   * Names the statement: PostgreSQL parses and plans it once per connection and reuses the plan.
   * Only for hot statements whose best plan does not depend on the values (planning a statement
   * with a 200-id array costs more than running it). Ignored by PGlite.
   */
  prepare?: string;
  /**
   * 'array': each row is an array of its column values in select order. For reads of many rows,
   * where building an object per row is a measurable share of the cost (chain verification).
   */
  rowMode?: 'array';
}

export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
}

/** A transaction: queries, plus work to run once it has committed (never if it rolls back). */
export interface Transaction extends Queryable {
  afterCommit(fn: () => void): void;
}

function runAfterCommit(callbacks: (() => void)[]): void {
  for (const fn of callbacks) {
    try {
      fn();
    } catch {
      // after-commit work is best effort (wake-ups, cache invalidation); the commit stands
    }
  }
}

export interface Database {
  readonly kind: 'postgres' | 'pglite';
  /** The role transactions run as. */
  readonly appRole: string;
  /** How another thread can open its own connection to the same database (null for PGlite). */
  readonly connection: { url: string; appRole: string } | null;
  /** Runs fn in one transaction on one connection; commits when fn resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL URL; null selects embedded PGlite. */
  url: string | null;
  /** Where PGlite keeps its files ('memory://' for an in-memory database). */
  pgliteDir: string;
  poolSize: number;
  /** Role to act as (default APP_ROLE); start-up fails if it can bypass row-level security. */
  appRole?: string;
  migrationsDir?: string;
  log?: (message: string) => void;
}

const DEFAULT_MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../migrations');

// SQLSTATE classes and driver errors that mean "the database is not there", not "your query is wrong".
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '53300']);

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  const message = e.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/.test(message);
}

function classify(err: unknown): unknown {
  return isDatabaseUnavailable(err) ? databaseUnavailable(err) : err;
}

async function assertRoleCannotBypassRls(tx: Queryable): Promise<void> {
  const { rows } = await tx.query<{ role: string; rolsuper: boolean; rolbypassrls: boolean }>(
    `select current_user as role, r.rolsuper, r.rolbypassrls from pg_roles r where r.rolname = current_user`,
  );
  const role = rows[0];
  if (!role || role.rolsuper || role.rolbypassrls) {
    throw new Error(`refusing to start: database role "${role?.role ?? '?'}" bypasses row-level security`);
  }
}

const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v); // int8: counts and sequence numbers
    if (oid === 1082) return (v: string) => v; // date: keep 'YYYY-MM-DD', never local midnight
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

async function openPostgres(options: DatabaseOptions): Promise<Database> {
  const admin = new pg.Client({ connectionString: options.url!, types: PG_TYPES });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`cannot connect to DATABASE_URL: ${(err as Error).message}`);
  }
  try {
    const connection = migrationConnection(
      (sql) => admin.query(sql),
      async (sql, params) => (await admin.query(sql, params as unknown[])).rows,
    );
    await migrate(connection, options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR, options.log);
  } finally {
    await admin.end();
  }
  return connectPostgres({ url: options.url!, appRole: options.appRole ?? APP_ROLE, poolSize: options.poolSize, log: options.log });
}

/**
 * A pool on an already migrated database, every connection acting as the app role. Also used by
 * worker threads, which open their own connections.
 */
export async function connectPostgres(options: { url: string; appRole: string; poolSize: number; log?: (message: string) => void }): Promise<Database> {
  const { appRole } = options;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    types: PG_TYPES,
    options: `-c role=${appRole} -c idle_in_transaction_session_timeout=60000`,
    connectionTimeoutMillis: 5000,
  });
  pool.on('error', (err) => options.log?.(`idle database connection failed: ${err.message}`));

  const database: Database = {
    kind: 'postgres',
    appRole,
    connection: { url: options.url, appRole },
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw classify(err);
      }
      const committed: (() => void)[] = [];
      const tx: Transaction = {
        async query(text, params, options) {
          const values = params as unknown[];
          const result = options?.rowMode
            ? await client.query({ name: options.prepare, text, values, rowMode: options.rowMode })
            : options?.prepare
              ? await client.query({ name: options.prepare, text, values })
              : await client.query(text, values);
          return { rows: result.rows, rowCount: result.rowCount ?? 0 };
        },
        afterCommit: (cb) => committed.push(cb),
      };
      try {
        await client.query('BEGIN');
        const result = await fn(tx);
        await client.query('COMMIT');
        client.release();
        runAfterCommit(committed);
        return result;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
          client.release();
        } catch {
          client.release(true);
        }
        throw classify(err);
      }
    },
    async ping() {
      await database.transaction((tx) => tx.query('select 1'));
    },
    async close() {
      await pool.end();
    },
  };
  try {
    await database.transaction(assertRoleCannotBypassRls);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return database;
}

async function openPglite(options: DatabaseOptions): Promise<Database> {
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
  const database: Database = {
    kind: 'pglite',
    appRole,
    connection: null,
    async transaction(fn) {
      if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'The database is closed');
      const committed: (() => void)[] = [];
      const result = await db.transaction(async (ptx) =>
        fn({
          async query(text, params, options) {
            const result = await ptx.query<never>(text, params as unknown[], options?.rowMode ? { rowMode: options.rowMode } : undefined);
            return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
          },
          afterCommit: (cb) => committed.push(cb),
        }),
      );
      runAfterCommit(committed);
      return result;
    },
    async ping() {
      await database.transaction((tx) => tx.query('select 1'));
    },
    async close() {
      closed = true;
      await db.close();
    },
  };
  try {
    await database.transaction(assertRoleCannotBypassRls);
  } catch (err) {
    await db.close();
    throw err;
  }
  return database;
}

/** Opens the database named by the options, applying pending migrations first. */
export function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options) : openPglite(options);
}

export function pgliteDirFor(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}
