// What both database engines share: the interface the rest of the service uses (Database,
// Transaction, Queryable), its options, and how an unreachable database is recognised. The engines
// are postgres.ts and pglite.ts; database.ts opens one of them.
import path from 'node:path';
import { DATABASE_ROLES } from '../config.js';
import { databaseUnavailable } from '../errors.js';

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
  /**
   * A statement whose answer the caller does not need (an audit entry): not sent on its own but in
   * one write with the transaction's next statement, or with its COMMIT, so it costs no round trip.
   * Statements keep their order. If it fails, the transaction fails there: the next statement or
   * the commit throws its error, and nothing is committed.
   */
  queryLater(text: string, params?: unknown[]): void;
  afterCommit(fn: () => void): void;
}

export interface TransactionOptions {
  /** A statement run first, in the same round trip as BEGIN (the tenant scope's settings). */
  setup?: { text: string; params: unknown[] };
  /**
   * The transaction only reads. PostgreSQL: no BEGIN and no COMMIT; each statement goes out with
   * the setup ahead of it and runs with it as one implicit transaction, read-only, so a write in it
   * fails (postgres-transactions.ts poolRead). So a setting one statement makes (set_config,
   * INDEX_ORDER_ONLY) does not reach the next: work that needs one runs in a transaction that is
   * not read-only.
   * Ignored by PGlite.
   */
  readOnly?: boolean;
}

/** Runs a committed transaction's after-commit work; one failing does not stop the others. */
export function runAfterCommit(callbacks: (() => void)[]): void {
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

export const DEFAULT_MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../migrations');

// SQLSTATE classes and driver errors that mean "the database is not there", not "your query is wrong".
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '53300']);

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  const message = e.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/.test(message);
}

/** A driver error that means the database is not there becomes the 503 problem; others pass. */
export function classify(err: unknown): unknown {
  return isDatabaseUnavailable(err) ? databaseUnavailable(err) : err;
}
