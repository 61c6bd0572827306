// `npm test`: creates a fresh PostgreSQL database with a random name, migrates it, runs every
// *.test.ts under src/ and test/ with node's test runner, and drops the database afterwards.
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
const files = [...testFiles(path.join(root, 'src')), ...testFiles(path.join(root, 'test'))]
  .filter((f) => filter.length === 0 || filter.some((part) => f.includes(part)))
  .sort();

const dbName = `dms_test_${randomBytes(6).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database ${dbName}`);
const testUrl = new URL(adminUrl);
testUrl.pathname = `/${dbName}`;

let code = 1;
try {
  // Migrate once up front, so test files start from a ready schema.
  const db = await openDatabase({ url: testUrl.toString(), pgliteDir: 'memory://', poolSize: 1 });
  await db.close();
  code = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-concurrency=4', '--test-reporter=spec', '--test-timeout=120000', ...files],
      { stdio: 'inherit', env: { ...process.env, TEST_DATABASE_URL: testUrl.toString(), LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' } },
    );
    child.on('exit', (status) => resolve(status ?? 1));
  });
} finally {
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
process.exit(code);
