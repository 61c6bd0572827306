// The retention worker killed for real between archiving a segment and deleting it: the service runs
// as a process (src/main.ts on PostgreSQL, archives in DATA_DIR/audit-archive) over a chain with
// 15,000 expired rows (three batches), and is SIGKILLed twice right after a segment's archive appears
// and before its rows are deleted: once mid-run on a full batch, once on the last, partial batch,
// after which the policy is shortened so the next run archives a longer segment from the same seq.
// To hit the window every time, the test holds the chain's anchor row (FOR UPDATE, from its own
// connection), which the worker's delete transaction locks first, and lets it through batch by
// batch. Afterwards nothing is lost, the survivors verify through /verify, and every archive segment
// (the copies written before the kills included) verifies with the offline verifier (audit:verify)
// against the signed checkpoints and its anchors.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { freePort } from '../../test/support/free-port.js';
import { privateTestDatabase, testApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestUser } from '../../test/support/factory.js';
import { runCli } from '../audit-verifier/cli.js';
import type { VerifyReport } from '../audit-verifier/verify-export.js';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { RETENTION } from './privilege.js';
import { createAuditRecorder } from './recorder.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The worker runs every AUDIT_RETENTION_INTERVAL_MINUTES (1 at least). The child gets a period no
// other timer uses, and this preload shortens that one interval to TICK_MS, so a run starts right
// after start-up; the worker, its batches and its archive store are the service's own.
const INTERVAL_MINUTES = 9973;
const TICK_MS = 250;
const PRELOAD = `data:text/javascript,${encodeURIComponent(
  `const setIntervalOf=globalThis.setInterval;globalThis.setInterval=(fn,ms,...args)=>setIntervalOf(fn,ms===${INTERVAL_MINUTES * 60_000}?${TICK_MS}:ms,...args);`,
)}`;

const OLD = 12_000; // 60 days old: expired under 30 days (batches 1-5000, 5001-10000, 10001-12000)
const MIDDLE = 3_000; // 10 days old: expired once the policy says 7 days
const RECENT = 5;
const key = (from: number, to: number) => `${String(from).padStart(12, '0')}-${String(to).padStart(12, '0')}.ndjson.gz`;

interface Service {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
  output: () => string;
}

interface ArchivedRow {
  id: string;
  seq: number;
  prevChecksum: string | null;
  checksum: string;
  [field: string]: unknown;
}

interface Segment {
  file: string;
  header: { orgId: string; fromSeq: number; toSeq: number; anchorBefore: { seq: number; checksum?: string } | null; archivedAt: string };
  rows: ArchivedRow[];
}

function readSegment(file: string): Segment {
  const [head, ...lines] = gunzipSync(readFileSync(file)).toString('utf8').trim().split('\n');
  return { file, header: (JSON.parse(head!) as { segment: Segment['header'] }).segment, rows: lines.map((l) => JSON.parse(l) as ArchivedRow) };
}

async function startService(env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', PRELOAD, path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    assert.equal(child.exitCode, null, `the service exited: ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return { child, url, exited, output: () => output };
    } catch {
      // not listening yet
    }
    assert.ok(Date.now() < deadline, `the service is not ready: ${output}`);
    await sleep(100);
  }
}

describe('audit retention killed between archive and delete', { skip: !process.env.TEST_DATABASE_URL && 'needs PostgreSQL (npm test provides it)' }, () => {
  let database: Awaited<ReturnType<typeof privateTestDatabase>>;
  let owner: pg.Client;
  let locker: pg.Client;
  let dataDir: string;
  const services: Service[] = [];

  before(async () => {
    database = await privateTestDatabase('postgres');
    owner = new pg.Client({ connectionString: database.url! });
    locker = new pg.Client({ connectionString: database.url! });
    for (const client of [owner, locker]) client.on('error', () => {}); // a failed query says it
    await Promise.all([owner.connect(), locker.connect()]);
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'dms-retention-kill-'));
  });
  after(async () => {
    for (const s of services) s.child.kill('SIGKILL');
    await Promise.all(services.map((s) => s.exited));
    await locker?.end().catch(() => {});
    await owner?.end().catch(() => {});
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing, and every segment written before a kill verifies against its anchors', async () => {
    // --- A chain of 15,005 sealed rows, and a policy that archives to DATA_DIR/audit-archive.
    const org = await createOrg(database.db, (await createPartner(database.db)).id);
    const user: TestUser = await createUser(database.db, { scope: 'system' });
    await owner.query(`insert into audit_retention_policies (org_id, retention_days, archive_to_object_store) values ($1, 30, true)`, [org.id]);
    const seed = (count: number, age: string) => owner.query(
      `insert into audit_entries (id, org_id, timestamp, actor_type, action, resource_type, details, result)
       select gen_random_uuid(), $1, now() - $3::interval + g * interval '1 millisecond', 'system', 'site.update', 'site', jsonb_build_object('n', g), 'success'
         from generate_series(1, $2::int) g`,
      [org.id, count, age],
    );
    await seed(OLD, '60 days');
    await seed(MIDDLE, '10 days');
    await seed(RECENT, '0 days');
    // Sealed (and checkpointed, with the key the service processes will use) before the worker starts,
    // so its batches are the ones this test expects.
    const env = {
      DATABASE_URL: database.url!, DATA_DIR: dataDir, LOG_LEVEL: 'warn', AUDIT_RETENTION_INTERVAL_MINUTES: String(INTERVAL_MINUTES),
    };
    const sealing = await testApp({ db: database.db, env: { ...env, AUDIT_RETENTION_INTERVAL_MINUTES: '0' } });
    await sealing.app.auditSealer.sealNow();
    await sealing.close();
    const total = OLD + MIDDLE + RECENT;
    const { rows: seeded } = await owner.query<{ id: string; seq: string }>(`select id, seq from audit_logs where org_id = $1 and seq is not null order by seq`, [org.id]);
    assert.equal(seeded.length, total);

    // --- The anchor row the worker's delete transaction locks first (lockAnchor), held from here.
    await owner.query(`insert into audit_chain_anchors (chain_id, org_id, anchor_seq, anchor_checksum) values ($1, $1, 0, '') on conflict do nothing`, [org.id]);
    const anchor = async () => Number((await owner.query<{ anchor_seq: string }>(`select anchor_seq from audit_chain_anchors where chain_id = $1`, [org.id])).rows[0]!.anchor_seq);
    const hold = async () => {
      await locker.query('begin');
      const { rows } = await locker.query<{ anchor_seq: string }>(`select anchor_seq from audit_chain_anchors where chain_id = $1 for update`, [org.id]);
      return Number(rows[0]!.anchor_seq);
    };
    const release = () => locker.query('commit');
    /** Lets the waiting worker delete one segment, and holds the anchor again once it has moved to `to`. */
    const passAnchor = async (to: number) => {
      const deadline = Date.now() + 30_000;
      await release();
      while ((await hold()) !== to) {
        await release();
        assert.ok(Date.now() < deadline, `the anchor never reached ${to}`);
        await sleep(20);
      }
    };
    /** The retention login's transaction is waiting for a lock: the held anchor, i.e. the delete. */
    const retentionWaits = async () => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { rows } = await owner.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and usename = 'dms_audit_retention' and wait_event_type = 'Lock'`,
        );
        if (rows[0]!.n > 0) return;
        assert.ok(Date.now() < deadline, 'the retention worker never reached the delete');
        await sleep(20);
      }
    };
    const archiveDir = path.join(dataDir, 'audit-archive', org.id);
    const waitForSegment = async (from: number, to: number, writtenAfter = '') => {
      const file = path.join(archiveDir, key(from, to));
      const deadline = Date.now() + 30_000;
      for (;;) {
        // put() renames a complete, fsync'd file into place: once it exists it is whole.
        if (existsSync(file)) {
          const segment = readSegment(file);
          if (segment.header.archivedAt > writtenAfter) return segment;
        }
        assert.ok(Date.now() < deadline, `no archive ${key(from, to)}; the service said: ${services.at(-1)?.output()}`);
        await sleep(10);
      }
    };
    // The service's logins, apart from the test's own pools on database.db.
    const serviceBackends = async (except: number[] = []) => (await owner.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and usename like 'dms\\_%' and not (pid = any ($1::int[]))`, [except],
    )).rows.map((r) => r.pid);
    const ours = await serviceBackends();
    const kill = async (service: Service) => {
      service.child.kill('SIGKILL');
      assert.equal(await service.exited, 'SIGKILL');
      await release();
      // The dead process's connections end (the retention one once its lock wait is over).
      const deadline = Date.now() + 30_000;
      while ((await serviceBackends(ours)).length > 0) {
        assert.ok(Date.now() < deadline, 'the killed service’s connections stay');
        await sleep(20);
      }
    };
    const assertNotDeleted = async (from: number, archived: Segment) => {
      assert.equal(await anchor(), from - 1, 'the killed worker deleted nothing of the archived segment');
      const { rows } = await owner.query<{ n: number }>(`select count(*)::int as n from audit_logs where org_id = $1 and seq between $2 and $3`, [org.id, from, archived.header.toSeq]);
      assert.equal(rows[0]!.n, archived.rows.length, 'every archived row is still in the database');
    };

    // --- Kill 1: mid-run, right after the second (full) batch is archived.
    assert.equal(await hold(), 0);
    const first = await startService(env);
    services.push(first);
    await waitForSegment(1, 5000);
    await retentionWaits();
    await passAnchor(5000);
    const beforeKill1 = await waitForSegment(5001, 10_000);
    await retentionWaits();
    await kill(first);
    await assertNotDeleted(5001, beforeKill1);

    // --- Kill 2: the next run archives 5001-10000 again (same name), deletes it, and is killed right
    // after archiving the last, partial batch.
    assert.equal(await hold(), 5000);
    const second = await startService(env);
    services.push(second);
    const rewritten = await waitForSegment(5001, 10_000, beforeKill1.header.archivedAt);
    await retentionWaits();
    await passAnchor(10_000);
    const beforeKill2 = await waitForSegment(10_001, OLD);
    await retentionWaits();
    await kill(second);
    await assertNotDeleted(10_001, beforeKill2);

    // --- While it is down the policy is shortened (PUT /audit-logs/retention would do the same; so
    // would time passing): the next run's last segment starts at 10001 again but ends at 15000.
    await owner.query(`update audit_retention_policies set retention_days = 7 where org_id = $1`, [org.id]);
    const third = await startService(env);
    services.push(third);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { rows } = await owner.query<{ cleaned: Date | null }>(`select last_cleanup_at as cleaned from audit_retention_policies where org_id = $1`, [org.id]);
      if (rows[0]!.cleaned && (await anchor()) === OLD + MIDDLE) break;
      assert.ok(Date.now() < deadline, `retention did not finish: anchor ${await anchor()}; ${third.output()}`);
      await sleep(50);
    }

    // --- What the archive holds: one file per segment name, the copy from before kill 2 beside the
    // longer segment that superseded it, and no partial file.
    const names = readdirSync(archiveDir).sort();
    assert.deepEqual(names, [key(1, 5000), key(5001, 10_000), key(10_001, OLD), key(10_001, OLD + MIDDLE)]);
    const segments = names.map((n) => readSegment(path.join(archiveDir, n)));

    // The copies written before each kill hold exactly the rows the run after it archived.
    assert.deepEqual(beforeKill1.rows, rewritten.rows, 'the re-archived 5001-10000 has the same rows as the copy before kill 1');
    assert.deepEqual(segments[1]!.rows, rewritten.rows);
    assert.deepEqual(segments[2]!.rows, beforeKill2.rows);
    assert.deepEqual(beforeKill2.rows, segments[3]!.rows.slice(0, beforeKill2.rows.length), 'the copy before kill 2 is a prefix of the longer segment');

    // --- Nothing lost: every row that ever existed is still stored or archived (with its id and seq).
    const { rows: stored } = await owner.query<{ id: string; seq: string }>(`select id, seq from audit_logs where org_id = $1 order by seq`, [org.id]);
    assert.deepEqual(stored.map((r) => Number(r.seq)), Array.from({ length: RECENT }, (_, i) => OLD + MIDDLE + 1 + i), 'only the recent rows survive');
    const kept = new Map<string, number>();
    for (const s of segments) for (const r of s.rows) kept.set(r.id, r.seq);
    for (const r of stored) kept.set(r.id, Number(r.seq));
    const lost = seeded.filter((r) => kept.get(r.id) !== Number(r.seq));
    assert.deepEqual(lost, [], 'every seeded row is in the database or in an archive, at its seq');

    // --- The survivors verify through the API, from the anchor.
    const login = await fetch(`${third.url}/api/v1/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: user.email, password: user.password }),
    });
    assert.equal(login.status, 200);
    const auth = { authorization: `Bearer ${((await login.json()) as { accessToken: string }).accessToken}` };
    const get = async (url: string) => {
      const res = await fetch(`${third.url}/api/v1${url}`, { headers: auth });
      assert.equal(res.status, 200, `${url}: ${res.status}`);
      return res;
    };
    const verified = (await (await get(`/audit-logs/verify?orgId=${org.id}`)).json()) as { valid: boolean; checked: number; firstSeq: number; anchor: { seq: number } };
    assert.deepEqual([verified.valid, verified.checked, verified.firstSeq, verified.anchor.seq], [true, RECENT, OLD + MIDDLE + 1, OLD + MIDDLE]);

    // --- Every segment, and each copy written before a kill, through the offline verifier with the
    // signed checkpoints and the public key, and linked to its anchors.
    const work = mkdtempSync(path.join(os.tmpdir(), 'dms-retention-verify-'));
    const publicKeyFile = path.join(work, 'public-key.json');
    writeFileSync(publicKeyFile, await (await get('/audit-logs/public-key')).text());
    const checkpoints: { seq: number; checksum: string }[] = [];
    for (let page = 1; ; page++) {
      const body = (await (await get(`/audit-logs/checkpoints?orgId=${org.id}&limit=100&page=${page}`)).json()) as { data: { seq: number; checksum: string }[] };
      checkpoints.push(...body.data);
      if (body.data.length < 100) break;
    }
    const checkpointsFile = path.join(work, 'checkpoints.json');
    writeFileSync(checkpointsFile, JSON.stringify({ data: checkpoints }));
    const signedAt = new Map(checkpoints.map((c) => [c.seq, c.checksum]));
    const verifyRows = async (name: string, rows: object[]): Promise<{ status: number; report: VerifyReport; text: string }> => {
      const file = path.join(work, `${name}.ndjson`);
      writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      let text = '';
      const status = await runCli(['--file', file, '--public-key', publicKeyFile, '--checkpoints', checkpointsFile, '--json'], (t) => (text += t), (t) => (text += t));
      return { status, report: JSON.parse(text) as VerifyReport, text };
    };
    try {
      for (const [name, segment] of [['before-kill-1', beforeKill1], ['before-kill-2', beforeKill2], ...segments.map((s) => [path.basename(s.file), s] as const)] as const) {
        const { fromSeq, toSeq, anchorBefore } = segment.header;
        assert.deepEqual(segment.rows.map((r) => r.seq), Array.from({ length: toSeq - fromSeq + 1 }, (_, i) => fromSeq + i), `${name}: rows ${fromSeq}..${toSeq}`);
        const { status, report, text } = await verifyRows(name, segment.rows);
        assert.equal(status, 0, `${name} does not verify: ${text}`);
        const chain = report.chains[0]!;
        assert.deepEqual([report.chains.length, chain.rows, chain.firstSeq, chain.lastSeq, chain.checkpoints.invalid], [1, toSeq - fromSeq + 1, fromSeq, toSeq, 0], name);
        assert.ok(chain.checkpoints.matched > 0, `${name}: a signed checkpoint vouches for its rows`);
        // Its start: the row before it, as the header names it, signed when the anchor moved there.
        const first = segment.rows[0]!;
        if (fromSeq === 1) {
          assert.deepEqual([anchorBefore, first.prevChecksum], [null, null], name);
        } else {
          assert.equal(anchorBefore?.seq, fromSeq - 1, name);
          assert.equal(anchorBefore?.checksum, first.prevChecksum, `${name}: the first row links to anchorBefore`);
          assert.equal(signedAt.get(fromSeq - 1), first.prevChecksum, `${name}: anchorBefore is the signed anchor at ${fromSeq - 1}`);
        }
      }
      // The segments that were deleted end at a signed retention anchor.
      for (const s of [segments[0]!, segments[1]!, segments[3]!]) assert.equal(signedAt.get(s.header.toSeq), s.rows.at(-1)!.checksum);

      // The whole history as one chain: each seq once (the longer segment where two start at the
      // same seq), then the survivors as the export serves them.
      const history = new Map<number, ArchivedRow>();
      for (const s of [...segments].sort((a, b) => a.header.toSeq - b.header.toSeq)) for (const r of s.rows) history.set(r.seq, r);
      const survivors = (await (await get(`/audit-logs/export?format=ndjson&orgId=${org.id}&afterSeq=${OLD + MIDDLE}`)).text()).trim().split('\n').map((l) => JSON.parse(l) as object);
      const whole = await verifyRows('whole-chain', [...[...history.values()].sort((a, b) => a.seq - b.seq), ...survivors]);
      assert.equal(whole.status, 0, whole.text);
      const chain = whole.report.chains[0]!;
      assert.deepEqual([chain.firstSeq, chain.lastSeq, chain.rows, chain.startsMidChain], [1, total, total, false]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }

    third.child.kill('SIGTERM');
    await third.exited;
  });
});

describe('audit retention: a second worker on a segment another one archived and deleted', () => {
  it('never replaces that archive with fewer rows', async () => {
    // Two instances sharing one archive (DATA_DIR here, a bucket in production): B chooses the
    // segment, A archives and deletes it, then B reads its rows. B's archive of what is left (nothing)
    // used to replace A's under the same name, losing the rows A had archived.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dms-retention-race-'));
    const env = { DATA_DIR: dataDir, AUDIT_RETENTION_INTERVAL_MINUTES: '0' };
    const a = await testApp({ env });
    let calls = 0;
    let chosen!: () => void;
    const bHasChosen = new Promise<void>((resolve) => (chosen = resolve));
    let mayRead!: () => void;
    const bMayRead = new Promise<void>((resolve) => (mayRead = resolve));
    // B's first retention transaction finds the segment's end; the second reads its rows. (B's
    // sealer and checkpoints have privileged transactions of their own, on the sealer's role.)
    const db: Database = { ...a.db, privilegedTransaction: async (role, fn) => {
      if (role === RETENTION.role && ++calls === 2) {
        chosen();
        await bMayRead;
      }
      return a.db.privilegedTransaction(role, fn);
    } };
    const b = await testApp({ db, env, clock: a.clock });
    try {
      const org = await createOrg(a.db, (await createPartner(a.db)).id);
      await withTenant(a.db, SYSTEM_SCOPE, (tx) => tx.query(`insert into audit_retention_policies (org_id, retention_days, archive_to_object_store) values ($1, 365, true)`, [org.id]));
      const record = createAuditRecorder({ now: () => a.clock.now() - 400 * 86_400_000, onRecorded: () => {} });
      await withTenant(a.db, SYSTEM_SCOPE, async (tx) => {
        for (let i = 0; i < 10; i++) await record(tx, { orgId: org.id, actor: { type: 'system', id: null }, action: 'site.update', details: { i } });
      });
      await a.app.auditSealer.sealNow();
      const runB = b.app.auditRetention.runOnce({ orgId: org.id });
      await bHasChosen;
      const [byA] = await a.app.auditRetention.runOnce({ orgId: org.id });
      assert.deepEqual([byA!.deleted, byA!.archived], [10, 10]);
      mayRead();
      const [byB] = await runB;
      assert.deepEqual([byB!.deleted, byB!.archived, byB!.anchorSeq, byB!.error], [0, 0, 10, null]);
      const archived = readSegment(path.join(dataDir, 'audit-archive', org.id, key(1, 10)));
      assert.deepEqual(archived.rows.map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await b.close();
      await a.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
