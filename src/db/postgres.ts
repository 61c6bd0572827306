// PostgreSQL: the service logs in as the app role through a pg pool (and the audit log's two
// privileged roles on their own connections), refusing at start-up a login that could be anyone
// stronger. Hot statements are prepared per connection and planned once (QueryOptions.prepare);
// postgres-transactions.ts sends the transactions.
import pg from 'pg';
import { DATABASE_ROLES, roleLoginUrl } from '../config.js';
import { APP_ROLE, DEFAULT_MIGRATIONS_DIR, type AuditRole, type Database, type DatabaseOptions, type Queryable } from './connection.js';
import { migrate, migrationConnection } from './migrate.js';
import { poolTransaction } from './postgres-transactions.js';
import { loginWithPasswordFallback } from './role-logins.js';

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

export async function openPostgres(options: DatabaseOptions): Promise<Database> {
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
    // Read-only by default: reads run outside BEGIN (poolRead), and a write in one must fail.
    options: `-c idle_in_transaction_session_timeout=60000 -c default_transaction_read_only=on${genericPlans ? ' -c plan_cache_mode=force_generic_plan' : ''}`,
    connectionTimeoutMillis: 5000,
    // Statements are written without waiting for the one before (poolTransaction sends BEGIN with the first).
    pipeline: true,
  } as pg.PoolConfig);
  pool.on('error', (err) => log?.(`idle database connection failed: ${err.message}`));
  return pool;
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
