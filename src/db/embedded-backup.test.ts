// The online backup of the embedded database: SIGUSR2 to the running service (started as `npm start`
// starts it) writes DATA_DIR/backups/embedded-<time>.tar.gz while requests keep writing; a second
// signal during it is ignored, a failing one is logged and survived; the tarball, extracted with
// plain tar into a fresh DATA_DIR beside the old secrets and signing key, starts a service that has
// everything written before the signal, every change with its audit entry, and a chain that verifies.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../../test/support/free-port.js';
import { stopChild } from '../../test/support/child-process.js';
import { GENERATED_KEY_FILE } from '../audit/checkpoints.js';
import { embeddedDatabaseDump, openDatabase, pgliteDirFor } from './database.js';
import { backupOnSignal, backupsDirFor, writeEmbeddedBackup } from './embedded-backup.js';
import { SYSTEM_SCOPE, withTenant } from './tenant-scope.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ADMIN = { email: 'admin@backup.test', password: 'correct horse battery staple' };
const BACKUP_NAME = /^embedded-\d{8}T\d{6}\.\d{3}Z\.tar\.gz$/;

const scratch: string[] = [];
after(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

/** Restores a backup as the README says: plain tar into DATA_DIR/pglite (0700). */
function extractInto(tarball: string, dataDir: string): void {
  mkdirSync(pgliteDirFor(dataDir), { recursive: true, mode: 0o700 });
  const tar = spawnSync('tar', ['-xzf', tarball, '-C', pgliteDirFor(dataDir)], { encoding: 'utf8' });
  assert.equal(tar.status, 0, tar.stderr);
}

interface Service {
  child: ChildProcess;
  url: string;
  /** Resolves with the first log line matching `pattern` in the output from offset `from` on. */
  line(pattern: RegExp, from?: number): Promise<string>;
  output(): string;
  stop(): Promise<void>;
}

/** src/main.ts (`npm start`) on the embedded database in `dataDir`, logging at info. */
async function startService(dataDir: string): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '',
      PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info',
      BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exited = false;
  const waiters = new Set<() => void>();
  const grow = (chunk: Buffer) => {
    output += chunk.toString();
    for (const wake of waiters) wake();
  };
  child.stdout!.on('data', grow);
  child.stderr!.on('data', grow);
  child.once('exit', () => {
    exited = true;
    for (const wake of waiters) wake();
  });
  const url = `http://127.0.0.1:${port}`;
  const service: Service = {
    child,
    url,
    output: () => output,
    line(pattern, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = output.slice(from).split('\n').find((l) => pattern.test(l));
          if (found !== undefined || exited) {
            clearTimeout(timer);
            waiters.delete(check);
            if (found !== undefined) resolve(found);
            else reject(new Error(`the service exited before logging ${pattern}:\n${output}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no log line ${pattern} within a minute:\n${output}`));
        }, 60_000);
        waiters.add(check);
        check();
      });
    },
    stop: () => stopChild(child, exited),
  };
  const deadline = Date.now() + 60_000;
  while (!(await fetch(`${url}/readyz`).then((r) => r.ok, () => false))) {
    if (exited || Date.now() > deadline) throw new Error(`the service did not become ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return service;
}

/** Signs in as the bootstrap admin and returns a JSON caller for the API. */
async function apiAs(url: string) {
  const login = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN),
  });
  assert.equal(login.status, 200, await login.clone().text());
  const { accessToken } = (await login.json()) as { accessToken: string };
  return async <T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${url}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${accessToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
}

type Api = Awaited<ReturnType<typeof apiAs>>;

async function siteIds(api: Api, orgId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page++) {
    const res = await api<{ data: { id: string }[]; pagination: { totalPages: number } }>('GET', `/orgs/sites?orgId=${orgId}&limit=100&page=${page}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const site of res.body.data) ids.add(site.id);
    if (page >= res.body.pagination.totalPages) return ids;
  }
}

async function auditedSiteIds(api: Api, orgId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page++) {
    const res = await api<{ data: { action: string; resourceId: string }[]; pagination: { totalPages: number } }>(
      'GET', `/audit-logs/logs?orgId=${orgId}&action=site.create&limit=100&page=${page}`,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const entry of res.body.data) if (entry.action === 'site.create') ids.add(entry.resourceId);
    if (page >= res.body.pagination.totalPages) return ids;
  }
}

/** The chain verifies with every row sealed (the sealer seals within a second of start-up). */
async function assertChainVerifies(api: Api, orgId: string): Promise<{ checked: number }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await api<{ valid: boolean; pending: number; checked: number; brokenAt: unknown }>('GET', `/audit-logs/verify?orgId=${orgId}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.valid, true, `chain ${orgId}: ${JSON.stringify(res.body)}`);
    if (res.body.pending === 0) return res.body;
    assert.ok(Date.now() < deadline, `chain ${orgId} still has pending rows: ${JSON.stringify(res.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('backing up the embedded database', () => {
  it('SIGUSR2 copies it while requests write; the copy, extracted with tar, starts a service with the data and a valid chain', async (t) => {
    const dataDir = tempDir('dms-backup-');
    const service = await startService(dataDir);
    let restored: Service | undefined;
    try {
      const api = await apiAs(service.url);
      const partner = await api<{ id: string }>('POST', '/orgs/partners', { name: 'Backup MSP', slug: 'backup-msp' });
      assert.equal(partner.status, 201, JSON.stringify(partner.body));
      const org = await api<{ id: string }>('POST', '/orgs/organizations', { partnerId: partner.body.id, name: 'Backup Org', slug: 'backup-org' });
      assert.equal(org.status, 201, JSON.stringify(org.body));
      const orgId = org.body.id;

      // A failing backup (DATA_DIR/backups is a file) is logged; the service carries on.
      writeFileSync(backupsDirFor(dataDir), 'not a folder');
      service.child.kill('SIGUSR2');
      await service.line(/embedded database backup failed/);
      assert.equal((await fetch(`${service.url}/readyz`)).status, 200);
      rmSync(backupsDirFor(dataDir));

      // Writers create sites without pause, before, during and after the backup.
      const written: { id: string; doneAt: number }[] = [];
      let writing = true;
      let writeFailed: Error | undefined;
      let n = 0;
      const writer = async () => {
        while (writing) {
          const res = await api<{ id: string }>('POST', '/orgs/sites', { orgId, name: `Site ${++n}` });
          if (res.status !== 201) throw (writeFailed = new Error(`site not created: ${res.status} ${JSON.stringify(res.body)}`));
          written.push({ id: res.body.id, doneAt: performance.now() });
        }
      };
      const writers = Promise.all([writer(), writer()]);
      writers.catch(() => {}); // awaited below; writeFailed ends the waits meanwhile
      const writtenAtLeast = async (count: number, since = 0) => {
        while (written.filter((w) => w.doneAt > since).length < count) {
          if (writeFailed) throw writeFailed;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await writtenAtLeast(20);

      const signalledAt = performance.now();
      const from = service.output().length;
      service.child.kill('SIGUSR2');
      await service.line(/embedded database backup started/, from);
      // Signals sent back to back merge into one; this one arrives while the backup runs.
      service.child.kill('SIGUSR2');
      const done = JSON.parse(await service.line(/embedded database backup written/, from)) as { file: string; bytes: number; ms: number; dumpMs: number };
      const finishedAt = performance.now();
      await writtenAtLeast(5, finishedAt);
      writing = false;
      await writers;
      await service.line(/backup requested while one is running: ignored/, from);
      assert.equal((await fetch(`${service.url}/readyz`)).status, 200, 'the second signal is not fatal');
      t.diagnostic(`backup: ${done.bytes} bytes in ${done.ms} ms (copy ${done.dumpMs} ms), ${written.length} sites written in all, before, during and after it`);

      const before = written.filter((w) => w.doneAt < signalledAt).map((w) => w.id);
      const afterwards = written.filter((w) => w.doneAt > finishedAt).map((w) => w.id);
      await service.stop();

      // One complete file, owner-only, and no temporary left behind.
      const files = readdirSync(backupsDirFor(dataDir));
      assert.equal(files.length, 1, files.join(', '));
      assert.match(files[0]!, BACKUP_NAME);
      assert.equal(path.join(backupsDirFor(dataDir), files[0]!), done.file);
      assert.equal(statSync(done.file).mode & 0o777, 0o600);
      assert.equal(statSync(backupsDirFor(dataDir)).mode & 0o777, 0o700);
      assert.equal(statSync(done.file).size, done.bytes);

      // Restore: a fresh DATA_DIR with the old secrets and signing key, the tarball extracted.
      const restoredDir = tempDir('dms-restored-');
      for (const name of ['secrets.json', GENERATED_KEY_FILE]) copyFileSync(path.join(dataDir, name), path.join(restoredDir, name));
      extractInto(done.file, restoredDir);
      restored = await startService(restoredDir);
      assert.doesNotMatch(restored.output(), /Created the first administrator/, 'the administrator came back with the data');
      const again = await apiAs(restored.url);

      const sites = await siteIds(again, orgId);
      for (const id of before) assert.ok(sites.has(id), `site ${id}, created before the signal, is in the backup`);
      for (const id of afterwards) assert.ok(!sites.has(id), `site ${id}, created after the backup, is not in it`);
      assert.deepEqual([...(await auditedSiteIds(again, orgId))].sort(), [...sites].sort(), 'every site with its audit entry, and no entry without its site');
      t.diagnostic(`restored: ${sites.size} sites (${before.length} created before the signal, ${afterwards.length} after the backup)`);
      const orgChain = await assertChainVerifies(again, orgId);
      assert.ok(orgChain.checked >= sites.size + 1, `checked ${orgChain.checked}`);
      await assertChainVerifies(again, 'platform');
    } finally {
      await service.stop();
      await restored?.stop();
    }
  });

  it('on PostgreSQL, SIGUSR2 only says that pg_dump is the way', () => {
    const dataDir = tempDir('dms-backup-pg-');
    const lines: string[] = [];
    const log = { info: (_: object, m: string) => lines.push(`info ${m}`), warn: (_: object, m: string) => lines.push(`warn ${m}`), error: (_: object, m: string) => lines.push(`error ${m}`) };
    backupOnSignal({ dataDir, embedded: false, log })();
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^warn .*PostgreSQL.*pg_dump/);
    assert.deepEqual(readdirSync(dataDir), [], 'nothing written');
  });

  it('waits for the transaction in progress and copies it committed', async () => {
    const dataDir = tempDir('dms-backup-unit-');
    const db = await openDatabase({ url: null, pgliteDir: pgliteDirFor(dataDir), poolSize: 1 });
    let slug = '';
    try {
      const dump = embeddedDatabaseDump(pgliteDirFor(dataDir));
      assert.ok(dump, 'the open embedded database offers its dump');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const insertedOnce = new Promise<void>((resolve) => (inserted = resolve));
      const transaction = withTenant(db, SYSTEM_SCOPE, async (tx) => {
        slug = `in-flight-${Date.now()}`;
        await tx.query(`insert into partners (name, slug) values ($1, $1)`, [slug]);
        inserted();
        await gate; // the request is still working: its transaction is open
      });
      await insertedOnce;
      let copied = false;
      const backup = writeEmbeddedBackup({ dataDir, dump }).then((result) => ((copied = true), result));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(copied, false, 'no copy while a transaction is open');
      release();
      await transaction;
      const { file } = await backup;

      const restoredDir = tempDir('dms-restored-unit-');
      extractInto(file, restoredDir);
      const copy = await openDatabase({ url: null, pgliteDir: pgliteDirFor(restoredDir), poolSize: 1 });
      try {
        const { rows } = await withTenant(copy, SYSTEM_SCOPE, (tx) => tx.query(`select slug from partners where slug = $1`, [slug]));
        assert.equal(rows.length, 1, 'the transaction that was open is in the copy, committed');
      } finally {
        await copy.close();
      }
    } finally {
      await db.close();
    }
    assert.equal(embeddedDatabaseDump(pgliteDirFor(dataDir)), null, 'a closed database offers no dump');
  });
});
