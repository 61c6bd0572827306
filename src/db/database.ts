// One interface over PostgreSQL (pg pool) and embedded PGlite. Both run the same SQL, the same
// migrations and the same row-level security; the service always acts as APP_ROLE, never as the
// owner of the schema. On PostgreSQL it logs in as that role (and the audit log's two privileged
// roles log in on their own connections), so no request can switch to anyone stronger; PGlite is
// one superuser connection that switches roles (DESIGN.md §3).
import { createHash } from 'node:crypto';
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { DATABASE_ROLES, roleLoginUrl } from '../config.js';
import { databaseUnavailable, storageFull } from '../errors.js';
import { migrate, migrationConnection } from './migrate.js';
import { loginWithPasswordFallback } from './role-logins.js';
import { createStorageGuard, isStorageFull, READ_ONLY_SQL_TRANSACTION } from './storage-full.js';

/** The non-superuser role every request runs as; created by the first migration. */
export const APP_ROLE = DATABASE_ROLES.app;

/** The audit log's privileged roles (DESIGN.md §4), each reached only through its own login. */
export type AuditRole = typeof DATABASE_ROLES.sealer | typeof DATABASE_ROLES.retention;

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface QueryOptions {
  /**
   * Statements are prepared by default (PostgreSQL): named after a hash of their text, parsed
   * once per connection and planned once (connections use generic plans: a custom plan per
   * execution cost as much CPU as the rest of a device-list page). Parse and plan were about half
   * of PostgreSQL's CPU on the hot routes when every statement was unnamed.
   * `false` keeps a statement unnamed and planned for its values, for one whose best plan does
   * depend on them (a free-text or time-range search over a log table, where a generic plan could
   * pick the wrong index for one tenant's data): its transaction switches to custom plans first,
   * one round trip more. Ignored by PGlite.
   */
  prepare?: false;
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

export interface TransactionOptions {
  /**
   * SQL sent in the same round trip as BEGIN (the tenant scope's settings): literal SQL only,
   * no parameters, so whoever builds it must have checked every value it contains.
   */
  setup?: string;
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

/** How busy the request connections are (metrics read it at scrape time). */
export type DatabaseUsage =
  | { kind: 'postgres'; max: number; open: number; idle: number; waiting: number }
  /** PGlite has one connection: `queued` transactions wait for it behind the running one. */
  | { kind: 'pglite'; queued: number };

export interface Database {
  readonly kind: 'postgres' | 'pglite';
  /** The role transactions run as. */
  readonly appRole: string;
  /** How another thread can open its own connection to the same database (null for PGlite). */
  readonly connection: { url: string; appRole: string } | null;
  /** Runs fn in one transaction on one connection; commits when fn resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * A transaction on the audit role's own login (PostgreSQL), or on PGlite's one connection, where
   * the caller switches to the role itself (audit/privilege.ts).
   */
  privilegedTransaction<T>(role: AuditRole, fn: (tx: Transaction) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  usage(): DatabaseUsage;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL URL of the schema owner, for migrations; null selects embedded PGlite. */
  url: string | null;
  /** The service's logins (PostgreSQL); each defaults to `url` logging in as its role without a password. */
  logins?: { app?: string; sealer?: string; retention?: string };
  /** Derives passwords for logins the server refuses without one (see role-logins.ts); unset: never. */
  loginPasswordSecret?: string;
  /** Where PGlite keeps its files ('memory://' for an in-memory database). */
  pgliteDir: string;
  poolSize: number;
  /** Role to act as (default APP_ROLE); start-up fails if it, or the login, could bypass row-level security. */
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

/**
 * PostgreSQL: the login itself (session_user, what RESET ROLE returns to) must be `role` and
 * nothing more: not a superuser, not BYPASSRLS, not the owner of the schema or the database, and
 * a member of no role at all (SET ROLE could switch to it, or its privileges would be inherited).
 */
async function assertLeastPrivilegeLogin(tx: Queryable, role: string, variable: string): Promise<void> {
  const { rows } = await tx.query<{ login: string; acting: string; rolsuper: boolean; rolbypassrls: boolean; owns: boolean; member_of: string }>(
    `select session_user::text as login, current_user::text as acting, r.rolsuper, r.rolbypassrls,
            exists (select 1 from pg_class c where c.relowner = r.oid and c.relnamespace = 'public'::regnamespace)
              or exists (select 1 from pg_namespace n where n.nspname = 'public' and n.nspowner = r.oid)
              or exists (select 1 from pg_database d where d.datname = current_database() and d.datdba = r.oid) as owns,
            coalesce((select string_agg(g.rolname::text, ', ' order by g.rolname)
                        from pg_auth_members m join pg_roles g on g.oid = m.roleid where m.member = r.oid), '') as member_of
       from pg_roles r where r.rolname = session_user`,
  );
  const login = rows[0];
  const refuse = (why: string) => new Error(`refusing to start: database login "${login?.login ?? '?'}" (${variable}) ${why}`);
  if (!login) throw refuse('is not a role');
  if (login.rolsuper) throw refuse('is a superuser, which bypasses row-level security');
  if (login.rolbypassrls) throw refuse('bypasses row-level security');
  if (login.owns) throw refuse('owns the schema or the database: the service must not log in as the owner');
  if (login.member_of) throw refuse(`is a member of ${login.member_of}, which SET ROLE could switch to`);
  if (login.login !== role || login.acting !== role) throw refuse(`acts as "${login.acting}", not as "${role}"`);
}

const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v); // int8: counts and sequence numbers
    if (oid === 1082) return (v: string) => v; // date: keep 'YYYY-MM-DD', never local midnight
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

async function openPostgres(options: DatabaseOptions): Promise<Database> {
  const owner = options.url!;
  const admin = new pg.Client({ connectionString: owner, types: PG_TYPES });
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
    const appRole = options.appRole ?? APP_ROLE;
    const logins = options.logins ?? {};
    const login = (url: string, role: string) => loginWithPasswordFallback(admin, url, role, options.loginPasswordSecret);
    return await connectPostgres({
      url: await login(logins.app ?? roleLoginUrl(owner, appRole), appRole),
      appRole,
      poolSize: options.poolSize,
      genericPlans: true,
      auditLogins: {
        [DATABASE_ROLES.sealer]: await login(logins.sealer ?? roleLoginUrl(owner, DATABASE_ROLES.sealer), DATABASE_ROLES.sealer),
        [DATABASE_ROLES.retention]: await login(logins.retention ?? roleLoginUrl(owner, DATABASE_ROLES.retention), DATABASE_ROLES.retention),
      },
      ...(options.log ? { log: options.log } : {}),
    });
  } finally {
    await admin.end();
  }
}

const LOGIN_VARIABLES: Record<string, string> = {
  [DATABASE_ROLES.app]: 'DATABASE_APP_URL',
  [DATABASE_ROLES.sealer]: 'DATABASE_SEALER_URL',
  [DATABASE_ROLES.retention]: 'DATABASE_RETENTION_URL',
};

function loginPool(url: string, max: number, log?: (message: string) => void, genericPlans = false): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types: PG_TYPES,
    // Request connections plan each prepared statement once (QueryOptions.prepare). Batch work
    // (sealer, retention, verification) keeps PostgreSQL's choice: its plans must follow tables
    // that grow fast (a generic plan made while the audit queue was empty scanned it per row,
    // and a backlog of 5,000 entries took 7-60 s to seal instead of under one).
    options: `-c idle_in_transaction_session_timeout=60000${genericPlans ? ' -c plan_cache_mode=force_generic_plan' : ''}`,
    connectionTimeoutMillis: 5000,
  });
  pool.on('error', (err) => log?.(`idle database connection failed: ${err.message}`));
  return pool;
}

/**
 * Per connection, the statements it has prepared. Bounded: a statement whose text embeds values
 * (none should) would otherwise prepare a new statement per call for the connection's life.
 */
const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();
const MAX_PREPARED_PER_CONNECTION = 256;
// Statement text to name, so a hot statement is hashed once per process, not once per call.
const namesByText = new Map<string, string>();

function statementName(client: pg.PoolClient, text: string): string | undefined {
  let name = namesByText.get(text);
  if (!name) {
    name = `s_${createHash('sha1').update(text).digest('base64url')}`;
    if (namesByText.size < 4096) namesByText.set(text, name);
  }
  let prepared = preparedOn.get(client);
  if (!prepared) preparedOn.set(client, (prepared = new Set()));
  if (prepared.has(name)) return name;
  if (prepared.size >= MAX_PREPARED_PER_CONNECTION) return undefined;
  prepared.add(name);
  return name;
}

/** One transaction on a connection of `pool`: commits when fn resolves, rolls back when it throws. */
async function poolTransaction<T>(pool: pg.Pool, fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw classify(err);
  }
  // pg-pool listens for errors only on idle clients: a connection that dies while checked out (a
  // restart of PostgreSQL between two statements) would otherwise emit an unhandled 'error' and
  // end the process. The statement in progress, if any, fails by itself.
  let broken = false;
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  const release = (destroy = false) => {
    client.removeListener('error', onError);
    client.release(destroy || broken);
  };
  const committed: (() => void)[] = [];
  let customPlans = false;
  const tx: Transaction = {
    async query(text, params, options) {
      let name: string | undefined;
      if (options?.prepare !== false) name = statementName(client, text);
      else if (!customPlans) {
        await client.query(`set local plan_cache_mode = force_custom_plan`);
        customPlans = true;
      }
      const result = await client.query({ name, text, values: params as unknown[], ...(options?.rowMode ? { rowMode: options.rowMode } : {}) });
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    },
    afterCommit: (cb) => committed.push(cb),
  };
  try {
    // One round trip: BEGIN and the setup travel as one simple-protocol message.
    await client.query(options?.setup ? `BEGIN; ${options.setup}` : 'BEGIN');
    const result = await fn(tx);
    await client.query('COMMIT');
    release();
    runAfterCommit(committed);
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
      release();
    } catch {
      release(true);
    }
    throw classify(err);
  }
}

/** Start-up: logs in once and refuses a login that could be more than `role`. */
async function checkLogin(pool: pg.Pool, role: string): Promise<void> {
  const variable = LOGIN_VARIABLES[role] ?? 'DATABASE_APP_URL';
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new Error(`cannot log in as ${role} (${variable}): ${(err as Error).message}`);
  }
  try {
    await assertLeastPrivilegeLogin({ query: async (text, params) => {
      const result = await client.query(text, params as unknown[]);
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    } }, role, variable);
  } finally {
    client.release();
  }
}

/**
 * Pools on an already migrated database: requests log in as the app role, and each audit role
 * given in `auditLogins` gets one connection of its own (the sealer and retention each work one
 * transaction at a time). Also used by worker threads, which open their own connections.
 */
export async function connectPostgres(options: {
  url: string;
  appRole: string;
  poolSize: number;
  /** The service's request connections: generic plans (see loginPool). */
  genericPlans?: boolean;
  auditLogins?: Partial<Record<AuditRole, string>>;
  log?: (message: string) => void;
}): Promise<Database> {
  const { appRole } = options;
  const pool = loginPool(options.url, options.poolSize, options.log, options.genericPlans ?? false);
  const auditPools = new Map<AuditRole, pg.Pool>();
  for (const [role, url] of Object.entries(options.auditLogins ?? {}) as [AuditRole, string][]) {
    auditPools.set(role, loginPool(url, 1, options.log));
  }
  const closeAll = () => Promise.all([pool, ...auditPools.values()].map((p) => p.end()));

  const database: Database = {
    kind: 'postgres',
    appRole,
    connection: { url: options.url, appRole },
    transaction: (fn, txOptions) => poolTransaction(pool, fn, txOptions),
    privilegedTransaction(role, fn) {
      const own = auditPools.get(role);
      if (!own) return Promise.reject(new Error(`no database login for ${role} on this connection`));
      return poolTransaction(own, fn);
    },
    async ping() {
      await database.transaction((tx) => tx.query('select 1'));
    },
    usage: () => ({ kind: 'postgres', max: options.poolSize, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      await closeAll();
    },
  };
  try {
    await checkLogin(pool, appRole);
    for (const [role, own] of auditPools) await checkLogin(own, role);
  } catch (err) {
    await closeAll();
    throw err;
  }
  return database;
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
          if (txOptions?.setup) await ptx.exec(txOptions.setup);
          return fn({
            async query(text, params, options) {
              const result = await ptx.query<never>(text, params as unknown[], options?.rowMode ? { rowMode: options.rowMode } : undefined);
              return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
            },
            afterCommit: (cb) => committed.push(cb),
          });
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
