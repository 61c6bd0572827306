// Builds the service for a test file, on the run's PostgreSQL database (TEST_DATABASE_URL, set by
// `npm test`) or on an in-memory PGlite, with a clock the test can move.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Database, type Queryable } from '../../src/db/database.js';

export type Backend = 'postgres' | 'pglite';

export interface TestClock {
  now: () => number;
  advance(ms: number): void;
  /** Stops the clock, so everything recorded from now on shares one timestamp. */
  freeze(): void;
}

export function testClock(start = Date.now()): TestClock {
  let offset = 0;
  let frozenAt: number | null = null;
  return {
    now: () => (frozenAt ?? Date.now()) + offset,
    advance: (ms) => {
      offset += ms;
    },
    freeze: () => {
      frozenAt ??= Date.now();
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  config: Config;
  clock: TestClock;
  close(): Promise<void>;
}

/** The backends a test file should cover: PostgreSQL when the runner provides it, and PGlite. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? ['postgres', 'pglite'] : ['pglite'];
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dms-test-')),
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENROLLMENT_KEY_PEPPER: randomBytes(32).toString('hex'),
    APP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ...env,
  });
}

export async function openTestDatabase(backend: Backend = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'): Promise<Database> {
  const url = backend === 'postgres' ? process.env.TEST_DATABASE_URL! : null;
  return openDatabase({ url, pgliteDir: 'memory://', poolSize: 10 });
}

/**
 * A database of the caller's own, for tests of work that spans every tenant (sealers and
 * checkpoint timers on every chain, cleanups by age), which on the run's shared PostgreSQL
 * database would act on, or be acted on by, other test files. PGlite is private anyway.
 */
export async function privateTestDatabase(backend: Backend = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'): Promise<{ db: Database; url: string | null; drop(): Promise<void> }> {
  if (backend === 'pglite') {
    const db = await openTestDatabase('pglite');
    return { db, url: null, drop: () => db.close() };
  }
  const base = new URL(process.env.TEST_DATABASE_URL!);
  const name = `${base.pathname.slice(1)}_p_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), pgliteDir: 'memory://', poolSize: 10 });
  return {
    db,
    /** The owner's URL, for processes of the service started on this database. */
    url: url.toString(),
    async drop() {
      await db.close();
      const again = new pg.Client({ connectionString: base.toString() });
      await again.connect();
      await again.query(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

export async function testApp(
  options: { backend?: Backend; env?: Record<string, string>; db?: Database; logStream?: NodeJS.WritableStream; consoleDir?: string; clock?: TestClock } = {},
): Promise<TestApp> {
  const db = options.db ?? (await openTestDatabase(options.backend));
  const config = testConfig(options.env);
  // A second instance of a test shares the first one's clock (tokens are checked against it).
  const clock = options.clock ?? testClock();
  const app = await buildApp({
    config,
    db,
    now: clock.now,
    ...(options.logStream ? { logStream: options.logStream } : {}),
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
  });
  await app.ready();
  return {
    app,
    db,
    config,
    clock,
    async close() {
      await app.close();
      if (!options.db) await db.close();
    },
  };
}

/**
 * Redis for the tests of multi-instance features: TEST_REDIS_URL or the local server. null when it
 * does not answer outside CI (those tests are skipped); CI requires it.
 */
export async function testRedisUrl(): Promise<string | null> {
  const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const { Redis } = await import('ioredis');
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return url;
  } catch (err) {
    if (process.env.CI) throw new Error(`Redis is required in CI: ${(err as Error).message}`);
    return null;
  } finally {
    probe.disconnect();
  }
}

/**
 * The schema owner (a superuser here), for tests that tamper with the audit log on purpose: the
 * service's own logins cannot. PostgreSQL: a connection of the test server's admin user to the
 * database `db` serves; PGlite: its one connection, switched back from the app role for the
 * transaction. `replica` turns the triggers off, as an attacker holding the owner could.
 */
export async function asOwner<T>(db: Database, fn: (tx: Queryable) => Promise<T>, options: { replica?: boolean } = {}): Promise<T> {
  if (!db.connection) {
    return db.transaction(async (tx) => {
      await tx.query('set local role none');
      if (options.replica) await tx.query('set local session_replication_role = replica');
      return fn(tx);
    });
  }
  const url = new URL(db.connection.url);
  const admin = new URL(process.env.TEST_DATABASE_URL!);
  url.username = admin.username;
  url.password = admin.password;
  url.searchParams.delete('user');
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query('begin');
    if (options.replica) await client.query('set local session_replication_role = replica');
    const result = await fn({ query: async (text, params) => {
      const r = await client.query(text, params as unknown[]);
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    } });
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}
