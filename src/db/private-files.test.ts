// DATA_DIR is the service's alone: the embedded database (whose WAL holds password hashes), the
// generated secrets, the audit signing key and archives end up owner-only (folders 0700, files
// 0600), also for a data folder an older version left world-writable.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/support/app.js';
import { makePrivate } from './private-files.js';

function modes(dir: string): { path: string; mode: number; dir: boolean }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => {
    const stat = statSync(path.join(dir, name));
    return { path: name, mode: stat.mode & 0o777, dir: stat.isDirectory() };
  });
}

const loose = (entries: ReturnType<typeof modes>) => entries.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600));

describe('the data folder', () => {
  it('holds the embedded database, secrets and signing key owner-only', async () => {
    const dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'dms-private-')), 'data');
    const config = testConfig({ DATA_DIR: dataDir, JWT_SECRET: '', ENROLLMENT_KEY_PEPPER: '', APP_ENCRYPTION_KEY: '' });
    const app = await buildApp({ config });
    try {
      await app.ready();
      const entries = modes(dataDir);
      assert.ok(entries.some((e) => e.path.startsWith('pglite')) && entries.length > 100, 'the embedded database is there');
      assert.deepEqual(loose(entries), []);
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
    } finally {
      await app.close();
    }
    // Closing tightens what the database wrote since (PGlite creates its files 0666).
    assert.deepEqual(loose(modes(dataDir)), []);
  });

  it('tightens a folder an older version left world-writable, without following links', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dms-private-'));
    mkdirSync(path.join(dir, 'pglite', 'base'), { recursive: true, mode: 0o755 });
    writeFileSync(path.join(dir, 'pglite', 'base', 'wal'), 'x', { mode: 0o666 });
    chmodSync(path.join(dir, 'pglite', 'base', 'wal'), 0o666);
    makePrivate(dir);
    assert.deepEqual(loose(modes(dir)), []);
  });
});
