// A full disk under DATA_DIR on the embedded database (PGlite), for real: a tmpfs of its own holds
// DATA_DIR, the service runs as a process on it, and a filler file takes every free byte. Writes
// must answer 503 problem+json saying storage is full (never a 500, never a hang), reads go on,
// and once the filler is gone writes succeed again without a restart, with the audit chain intact.
// A second case puts PGlite's WAL at a segment boundary before the disk fills: there an unguarded
// commit is a PANIC that leaves PGlite spinning forever (storage-full.ts); the guard refuses it.
// Mounting needs root: without it (or when the mount fails) the tests are skipped, saying why.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { freePort } from '../../test/support/free-port.js';
import { toAppError } from '../http/error-handler.js';
import { backupsDirFor, writeEmbeddedBackup } from './embedded-backup.js';
import { STORAGE_RESERVE_BYTES } from './storage-full.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ADMIN = { email: 'admin@disk-full.test', password: 'disk-full-password-1' };
// The guard looks at free space at most once a second.
const GUARD_RECHECK_MS = 1000;

const mounts: string[] = [];

/** A fresh tmpfs of `megabytes`, or why there is none. */
function mountTmpfs(megabytes: number): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'needs root to mount a tmpfs for DATA_DIR' };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dms-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}` };
  }
  mounts.push(dir);
  return { dir };
}

async function unmount(dir: string): Promise<void> {
  if (!mounts.includes(dir)) return;
  for (let attempt = 0; ; attempt++) {
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      break;
    } catch (err) {
      // A process that just died may hold it for a moment; in the end let it go lazily.
      if (attempt >= 20) {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
        break;
      }
      await sleep(100);
    }
  }
  mounts.splice(mounts.indexOf(dir), 1);
  rmSync(dir, { recursive: true, force: true });
}

const freeBytes = (dir: string) => {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize;
};

/** Writes a file until the filesystem refuses (ENOSPC), so nothing is left. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 20, 4096, 512]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    closeSync(fd);
  }
}

function child(args: string[], env: Record<string, string>): { proc: ChildProcess; exited: Promise<number | string>; output: () => string } {
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? code ?? -1)));
  return { proc, exited, output: () => output };
}

async function stopChild(c: ReturnType<typeof child>): Promise<number | string> {
  if (c.proc.exitCode === null && c.proc.signalCode === null) {
    c.proc.kill('SIGTERM');
    const killer = setTimeout(() => c.proc.kill('SIGKILL'), 15_000);
    const status = await c.exited;
    clearTimeout(killer);
    return status;
  }
  return c.exited;
}

describe('a full disk under DATA_DIR on the embedded database', () => {
  after(async () => {
    for (const dir of [...mounts]) await unmount(dir);
  });

  it('maps disk_full (53100) and ENOSPC to 503 storage full with Retry-After', () => {
    // The shapes seen on this machine: PGlite's (and PostgreSQL's) error for a data file that cannot
    // grow, and a file write of the service's own.
    const pgError = Object.assign(new Error('could not extend file "base/5/16467_fsm": No space left on device'), { code: '53100', severity: 'ERROR' });
    const fsError = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: 'ENOSPC', errno: -28 });
    for (const err of [pgError, fsError]) {
      const mapped = toAppError(err);
      assert.deepEqual([mapped.status, mapped.code], [503, 'SERVICE_UNAVAILABLE']);
      assert.match(mapped.message, /^Storage is full/);
      assert.ok(Number(mapped.headers['retry-after']) > 0);
    }
  });

  it('refuses a backup that would eat into the database’s reserve, leaving no file behind', async (t: TestContext) => {
    const mount = mountTmpfs(32);
    if ('skip' in mount) {
      t.skip(mount.skip);
      return;
    }
    const dataDir = path.join(mount.dir, 'data');
    const tarball = new Blob([Buffer.alloc(4 << 20, 7)]);
    // 32 MiB free is less than the 64 MiB reserve plus the copy: refused, before anything is written.
    await assert.rejects(writeEmbeddedBackup({ dataDir, dump: async () => tarball }), /not enough free space for a backup/);
    assert.deepEqual(readdirSync(backupsDirFor(dataDir)), [], 'no backup and no temporary file');
    assert.ok(freeBytes(mount.dir) > 30 << 20, 'nothing of the disk was used');
    // With a reserve it leaves room for, the same copy is written.
    const written = await writeEmbeddedBackup({ dataDir, dump: async () => tarball, reserveBytes: 8 << 20 });
    assert.ok(written.bytes > 0);
    assert.deepEqual(readdirSync(backupsDirFor(dataDir)), [path.basename(written.file)]);
  });

  it('refuses writes with 503 while it is full, keeps serving reads, and recovers without a restart', async (t: TestContext) => {
    // About 40 MiB of database, the guard's reserve, and room to spare before the filler.
    const mount = mountTmpfs(Math.ceil(STORAGE_RESERVE_BYTES / 2 ** 20) + 96);
    if ('skip' in mount) {
      t.skip(mount.skip);
      return;
    }
    const dataDir = path.join(mount.dir, 'data');
    const filler = path.join(mount.dir, 'filler');
    const port = await freePort();
    const service = child([path.join(ROOT, 'src/main.ts')], {
      PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn',
      BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password, AUDIT_RETENTION_INTERVAL_MINUTES: '0',
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 60_000;
      while (!(await fetch(`${base}/readyz`).then((r) => r.ok, () => false))) {
        assert.equal(service.proc.exitCode, null, `the service exited: ${service.output()}`);
        assert.ok(Date.now() < deadline, `the service is not ready: ${service.output()}`);
        await sleep(100);
      }
      // Every call gets 10 s: a hang fails the test instead of stalling it.
      const call = async (method: string, url: string, body?: unknown, token?: string) => {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(10_000),
        });
        return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> & { data?: unknown[] } };
      };
      const login = await call('POST', '/api/v1/auth/login', ADMIN);
      assert.equal(login.status, 200);
      const token = login.body.accessToken as string;
      const api = (method: string, url: string, body?: unknown) => call(method, `/api/v1${url}`, body, token);
      const created = async (url: string, body: unknown) => {
        const res = await api('POST', url, body);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body as { id: string };
      };

      // --- Data first, sealed into the audit chain.
      const partner = await created('/orgs/partners', { name: 'Full Disk MSP', slug: 'full-disk-msp' });
      const org = await created('/orgs/organizations', { partnerId: partner.id, name: 'Full Disk Org', slug: 'full-disk-org' });
      const site = await created('/orgs/sites', { orgId: org.id, name: 'First site' });
      await created('/orgs/sites', { orgId: org.id, name: 'Second site' });
      const settled = async () => {
        const until = Date.now() + 20_000;
        for (;;) {
          const v = await api('GET', `/audit-logs/verify?orgId=${org.id}`);
          assert.equal(v.status, 200);
          if (v.body.pending === 0) return v.body;
          assert.ok(Date.now() < until, `rows stay pending: ${JSON.stringify(v.body)}`);
          await sleep(100);
        }
      };
      const before = await settled();
      assert.equal(before.valid, true);

      // --- The disk fills up.
      assert.ok(freeBytes(mount.dir) > STORAGE_RESERVE_BYTES, 'room above the reserve before the filler');
      fillUp(filler);
      assert.ok(freeBytes(mount.dir) < 64 * 1024, `the filler leaves nothing: ${freeBytes(mount.dir)} bytes free`);
      await sleep(GUARD_RECHECK_MS + 200);

      const refused = (res: Awaited<ReturnType<typeof call>>, what: string) => {
        assert.equal(res.status, 503, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.match(String(res.headers.get('content-type')), /^application\/problem\+json/);
        assert.equal(res.body.code, 'SERVICE_UNAVAILABLE');
        assert.match(String(res.body.detail), /storage is full/i, what);
        assert.ok(Number(res.headers.get('retry-after')) > 0, `${what}: Retry-After`);
      };
      refused(await api('POST', '/orgs/sites', { orgId: org.id, name: 'While full' }), 'create a site');
      refused(await api('PATCH', `/orgs/sites/${site.id}`, { name: 'Renamed while full' }), 'rename a site');
      refused(await api('POST', '/orgs/organizations', { partnerId: partner.id, name: 'Another', slug: 'another-org' }), 'create an organization');
      refused(await call('POST', '/api/v1/auth/login', ADMIN), 'sign in (a session is a write)');

      // Reads go on.
      const sites = await api('GET', `/orgs/sites?orgId=${org.id}`);
      assert.equal(sites.status, 200);
      assert.deepEqual((sites.body.data as { name: string }[]).map((s) => s.name).sort(), ['First site', 'Second site']);
      assert.equal((await api('GET', '/orgs/organizations')).status, 200);
      assert.equal((await api('GET', `/orgs/sites/${site.id}`)).body.name, 'First site');
      assert.equal((await api('GET', `/audit-logs/logs?orgId=${org.id}`)).status, 200);
      assert.equal((await fetch(`${base}/readyz`)).status, 200);

      // --- Space returns: writes succeed again, same process.
      unlinkSync(filler);
      const until = Date.now() + 10_000;
      let again = await api('POST', '/orgs/sites', { orgId: org.id, name: 'After the disk was freed' });
      while (again.status === 503) {
        assert.ok(Date.now() < until, 'writes stay refused after the filler is gone');
        await sleep(200);
        again = await api('POST', '/orgs/sites', { orgId: org.id, name: 'After the disk was freed' });
      }
      assert.equal(again.status, 201, JSON.stringify(again.body));
      const renamed = await api('PATCH', `/orgs/sites/${site.id}`, { name: 'Renamed after' });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      const afterwards = await settled();
      assert.equal(afterwards.valid, true, JSON.stringify(afterwards));
      assert.equal(afterwards.brokenAt, null);
      assert.equal(afterwards.lastSeq, (before.lastSeq as number) + 2, 'the refused writes left no audit rows; the two since did');
      const logs = await api('GET', `/audit-logs/logs?orgId=${org.id}&limit=100`);
      assert.ok(!(logs.body.data as { resourceName?: string }[]).some((e) => /while full/i.test(String(e.resourceName))), 'nothing of the refused writes was recorded');

      assert.doesNotMatch(service.output(), /"code":"INTERNAL"/, 'no 500 on the way');
      assert.equal(await stopChild(service), 0, `clean shutdown: ${service.output()}`);
    } finally {
      await stopChild(service);
      await unmount(mount.dir);
    }
  });

  it('refuses a commit that would need a new WAL segment on a full disk instead of hanging', async (t: TestContext) => {
    const mount = mountTmpfs(Math.ceil(STORAGE_RESERVE_BYTES / 2 ** 20) + 96);
    if ('skip' in mount) {
      t.skip(mount.skip);
      return;
    }
    // In a process of its own: should PGlite PANIC, it spins synchronously and only a kill ends it.
    const script = `
      import { closeSync, openSync, writeSync, unlinkSync } from 'node:fs';
      import { openDatabase } from './src/db/database.ts';
      const dir = process.env.DISK_DIR;
      if (!dir) throw new Error('DISK_DIR (the tmpfs to fill) is not set');
      const report = (step, value) => process.stdout.write(JSON.stringify({ step, value }) + '\\n');
      const outcome = (p) => p.then(() => 'ok', (err) => ({ status: err.status ?? null, code: err.code ?? null, message: err.message }));
      const db = await openDatabase({ url: null, pgliteDir: dir + '/pglite', poolSize: 1 });
      const asSuperuser = (sql) => db.transaction(async (tx) => { await tx.query('set local role none'); return tx.query(sql); });
      // A row whose page has room: changing it needs no new data page, only WAL.
      await asSuperuser('create table scratch (n int)');
      await asSuperuser('insert into scratch values (0)');
      const fd = openSync(dir + '/filler', 'w');
      for (const size of [1 << 20, 4096, 512]) { const b = Buffer.alloc(size, 1); try { for (;;) writeSync(fd, b); } catch (err) { if (err.code !== 'ENOSPC') throw err; } }
      closeSync(fd);
      await new Promise((r) => setTimeout(r, ${GUARD_RECHECK_MS + 200}));
      // The next WAL record starts a new segment, which a full disk cannot hold: without the guard
      // this update's commit is a PANIC and the process hangs here for good (tried).
      report('switch', await outcome(asSuperuser('select pg_switch_wal()')));
      report('write', await outcome(asSuperuser('update scratch set n = 1')));
      report('read', await outcome(db.transaction((tx) => tx.query('select 1'))));
      unlinkSync(dir + '/filler');
      await new Promise((r) => setTimeout(r, ${GUARD_RECHECK_MS + 200}));
      report('write after', await outcome(asSuperuser('update scratch set n = 2')));
      report('rows', (await asSuperuser('select n from scratch')).rows);
      await db.close();
      report('closed', true);
    `;
    const run = child(['--input-type=module', '-e', script], { DISK_DIR: mount.dir });
    const watchdog = setTimeout(() => run.proc.kill('SIGKILL'), 45_000);
    try {
      const status = await run.exited;
      const steps = new Map(run.output().split('\n').filter((l) => l.startsWith('{"step"')).map((l) => {
        const { step, value } = JSON.parse(l) as { step: string; value: unknown };
        return [step, value] as const;
      }));
      assert.equal(status, 0, `the process hung or failed (killed after 45 s?): ${run.output()}`);
      assert.equal(steps.get('switch'), 'ok');
      const write = steps.get('write') as { status: number; code: string; message: string };
      assert.deepEqual([write.status, write.code], [503, 'SERVICE_UNAVAILABLE'], run.output());
      assert.match(write.message, /^Storage is full/);
      assert.equal(steps.get('read'), 'ok');
      assert.equal(steps.get('write after'), 'ok');
      assert.deepEqual(steps.get('rows'), [{ n: 2 }]);
      assert.equal(steps.get('closed'), true);
    } finally {
      clearTimeout(watchdog);
      await stopChild(run);
      await unmount(mount.dir);
    }
  });
});
