// `npm test`: creates a fresh PostgreSQL database with a random name, migrates it, runs every
// *.test.ts under src/, test/ and web/e2e/ (the console in a real browser) with node's test runner, and drops the database afterwards.
// Set TEST_ADMIN_DATABASE_URL to point at another server (default: local postgres, trust auth).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';

const root = path.resolve(import.meta.dirname, '..');
const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return entry === 'node_modules' ? [] : testFiles(full);
    return entry.endsWith('.test.ts') ? [full] : [];
  });
}

const filter = process.argv.slice(2);
const files = [...testFiles(path.join(root, 'src')), ...testFiles(path.join(root, 'test')), ...testFiles(path.join(root, 'web', 'e2e'))]
  .filter((f) => filter.length === 0 || filter.some((part) => f.includes(part)))
  .sort();

function runSuite(env: Record<string, string>): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-concurrency=4', '--test-reporter=spec', '--test-timeout=300000', ...files],
      { stdio: 'inherit', env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', ...env } },
    );
    child.on('exit', (status) => resolve(status ?? 1));
  });
}

const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
try {
  await admin.connect();
} catch (err) {
  // CI must test on PostgreSQL; a developer without one still gets the PGlite half of the suite.
  if (process.env.CI) throw new Error(`PostgreSQL is required in CI: ${(err as Error).message}`);
  process.stderr.write(`\nPostgreSQL is not reachable at ${adminUrl} (${(err as Error).message}).\nRunning the suite on embedded PGlite only; PostgreSQL-only tests are skipped.\n\n`);
  process.exit(await runSuite({}));
}

const dbName = `dms_test_${randomBytes(6).toString('hex')}`;
await admin.query(`create database ${dbName}`);
// Not held open through the suite: a restart of PostgreSQL meanwhile (the fault tests, a developer)
// would end it, and an idle client's error event would end the runner.
await admin.end();
const testUrl = new URL(adminUrl);
testUrl.pathname = `/${dbName}`;

let code = 1;
try {
  // Migrate once up front, so test files start from a ready schema.
  const db = await openDatabase({ url: testUrl.toString(), pgliteDir: 'memory://', poolSize: 1 });
  await db.close();
  code = await runSuite({ TEST_DATABASE_URL: testUrl.toString() });
} finally {
  const dropper = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  try {
    await dropper.connect();
    await dropper.query(`drop database if exists ${dbName} with (force)`);
  } catch (err) {
    process.stderr.write(`could not drop the test database ${dbName}: ${(err as Error).message}\n`);
  } finally {
    await dropper.end().catch(() => {});
  }
}
process.exit(code);
