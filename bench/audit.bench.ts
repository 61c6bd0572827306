// The audit log: chained audit writes against plain inserts (64 writers, one organization), list and
// search over 1,000,000 rows in 100 organizations, and /verify over a 1,000,000-row chain.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../src/db/database.js';
import { withTenant, type TenantScope } from '../src/db/tenant-scope.js';
import { createAuditRecorder, type AuditEvent } from '../src/audit/recorder.js';
import { createSealer } from '../src/audit/sealer.js';
import { createDatabase, fixedRate, median, round, ROOT, RUNS, startService, type Row } from './harness.js';

export const name = 'audit';

const WRITERS = 64;
export const WRITE_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const ORGS = 100;
const ROWS_PER_ORG = Number(process.env.BENCH_AUDIT_ROWS_PER_ORG ?? 10_000);
const BIG_CHAIN = Number(process.env.BENCH_AUDIT_BIG_CHAIN ?? 1_000_000);
const QUERY_RATE = 20; // heavier than a cached GET: 20 requests/s over one connection

function event(orgId: string, i: number): AuditEvent {
  return {
    orgId,
    actor: { type: 'user', id: randomUUID(), email: `tech${i % 50}@msp.example` },
    action: 'device.update',
    resource: { type: 'device', id: randomUUID(), name: `host-${i}` },
    details: { changedFields: ['name'], before: { name: `old-${i}` }, after: { name: `host-${i}` } },
    ip: '203.0.113.9',
    userAgent: 'bench/1.0',
  };
}

/** 64 writers for WRITE_SECONDS, one row per transaction; returns rows written. */
async function writeFor(db: Database, scope: TenantScope, write: (tx: Parameters<Parameters<typeof withTenant>[2]>[0], i: number) => Promise<void>): Promise<number> {
  const deadline = Date.now() + WRITE_SECONDS * 1000;
  let total = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (Date.now() < deadline) {
        const i = total++;
        await withTenant(db, scope, (tx) => write(tx, i));
      }
    }),
  );
  return total;
}

// One pending row per transaction, as a change recorded through recordAudit writes it.
const PGBENCH_SCRIPT = `\\set n random(1, 1000000000)
insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id, resource_name, details, ip_address, user_agent, result) values (gen_random_uuid(), ':org', date_trunc('milliseconds', now()), 'user', gen_random_uuid(), 'tech@msp.example', 'device.update', 'device', gen_random_uuid(), 'host-' || :n, jsonb_build_object('changedFields', jsonb_build_array('name'), 'n', :n), '203.0.113.9', 'bench/1.0', 'success');
`;

/** 64 pgbench clients inserting into one organization's chain for WRITE_SECONDS; returns rows inserted. */
export async function pgbench(url: string, orgId: string): Promise<number> {
  const script = path.join(os.tmpdir(), `dms-audit-${process.pid}.sql`);
  writeFileSync(script, PGBENCH_SCRIPT);
  const { stdout } = await promisify(execFile)('pgbench', ['-n', '-c', String(WRITERS), '-j', '2', '-T', String(WRITE_SECONDS), '-f', script, '-D', `org=${orgId}`, url]);
  const processed = /number of transactions actually processed: (\d+)/.exec(stdout);
  if (!processed) throw new Error(`pgbench: ${stdout}`);
  return Number(processed[1]);
}

async function createOrgs(admin: pg.Client, count: number): Promise<string[]> {
  const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench', 'bench-${randomUUID().slice(0, 8)}', 'active') returning id`);
  const { rows } = await admin.query(
    `insert into organizations (partner_id, name, slug) select $1, 'Org ' || g, 'org-' || g || '-' || substr(md5(random()::text), 1, 6)
       from generate_series(1, $2) g returning id`,
    [partner.id, count],
  );
  return rows.map((r: { id: string }) => r.id);
}

async function seed(admin: pg.Client, orgIds: string[], perOrg: number): Promise<void> {
  // Pending rows, as the recorder writes them; the sealer chains them afterwards.
  await admin.query(
    `insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id,
                                resource_name, details, ip_address, user_agent, result)
     select gen_random_uuid(), o, date_trunc('milliseconds', now() - g * interval '1 second'), 'user', gen_random_uuid(),
            'tech' || (g % 50) || '@msp' || (g % 7) || '.example',
            (array['user.login', 'device.update', 'script.execute', 'site.update', 'policy.evaluate'])[1 + g % 5],
            'device', gen_random_uuid(), 'host-' || g,
            jsonb_build_object('n', g, 'note', md5(g::text)), '10.0.' || (g % 250) || '.1', 'agent/1.0', 'success'
       from unnest($1::uuid[]) o, generate_series(1, $2) g`,
    [orgIds, perOrg],
  );
}

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const db = await openDatabase({ url: database.url, pgliteDir: 'memory://', poolSize: 32 });
  const sealer = createSealer({ db, log: (err) => console.error(err) });
  const rows: Row[] = [];
  try {
    // --- chained writes vs plain inserts: same table, same 64 pgbench writers, one row per transaction.
    // Plain: the sealer is off. Chained: it runs alongside, and the clock stops when the last row has
    // its place in the chain.
    const [plainOrg, chainedOrg, recorderOrg] = await createOrgs(admin, 3) as [string, string, string];
    const plainRates: number[] = [];
    const chainedRates: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      let start = performance.now();
      const plain = await pgbench(database.url, plainOrg);
      plainRates.push(plain / ((performance.now() - start) / 1000));
      await sealer.sealNow(); // chain the baseline's rows outside the measurement

      sealer.start();
      start = performance.now();
      const chained = await pgbench(database.url, chainedOrg);
      await sealer.sealNow();
      chainedRates.push(chained / ((performance.now() - start) / 1000));
      await sealer.stop();
    }
    const chainedRate = round(median(chainedRates), 0);
    const plainRate = round(median(plainRates), 0);
    rows.push({
      name: `audit: chained writes, ${WRITERS} pgbench writers, one org (until sealed)`, figure: chainedRate, unit: 'rows/s', baseline: plainRate,
      ratio: round(chainedRate / plainRate), target: '>= 5000 rows/s and >= 0.85x plain', pass: chainedRate >= 5000 && chainedRate / plainRate >= 0.85,
    });

    // The same through the service's own path (pool, withTenant, recordAudit), for information:
    // on 2 cores the Node client's per-transaction cost, not the chain, sets this figure.
    const record = createAuditRecorder({ now: Date.now, onRecorded: sealer.wake });
    const scope: TenantScope = { scope: 'organization', partnerId: '00000000-0000-0000-0000-000000000000', orgIds: [recorderOrg] };
    sealer.start();
    const start = performance.now();
    const written = await writeFor(db, scope, (tx, i) => record(tx, event(recorderOrg, i)));
    await sealer.sealNow();
    await sealer.stop();
    rows.push({ name: `audit: recordAudit through the pool, ${WRITERS} writers (until sealed, information)`, figure: round(written / ((performance.now() - start) / 1000), 0), unit: 'rows/s', baseline: null, ratio: null });

    // --- 1,000,000 rows across 100 organizations, and one 1,000,000-row chain -------------------
    const orgs = await createOrgs(admin, ORGS);
    const [bigOrg] = await createOrgs(admin, 1) as [string];
    let seedStart = performance.now();
    await seed(admin, orgs, ROWS_PER_ORG);
    await seed(admin, [bigOrg], BIG_CHAIN);
    await admin.query('analyze audit_entries, audit_pending');
    const seedSeconds = (performance.now() - seedStart) / 1000;
    seedStart = performance.now();
    await sealer.sealNow();
    const sealSeconds = (performance.now() - seedStart) / 1000;
    // Let the tables settle as autovacuum would leave them (the emptied queue's dead rows gone,
    // visibility maps set) before timing reads of them.
    await admin.query('vacuum (analyze) audit_entries, audit_seals, audit_pending');
    const sealedRows = ORGS * ROWS_PER_ORG + BIG_CHAIN;
    rows.push({ name: `audit: sealer throughput over ${sealedRows} seeded rows (information)`, figure: round(sealedRows / sealSeconds, 0), unit: 'rows/s', baseline: null, ratio: null });
    process.stderr.write(`  seeded ${sealedRows} rows in ${round(seedSeconds, 1)} s, sealed in ${round(sealSeconds, 1)} s\n`);

    const { service, adminToken } = await startService(database.url);
    try {
      const headers = { authorization: `Bearer ${adminToken}` };
      const org = orgs[42]!;
      const queries = {
        search: `/api/v1/audit-logs/search?orgId=${org}&q=host-77`,
        logs: `/api/v1/audit-logs/logs?orgId=${org}&action=script&user=tech7`,
      };
      for (const [label, url] of Object.entries(queries)) {
        const check = await fetch(service.url + url, { headers });
        if (!check.ok) throw new Error(`${url}: ${check.status} ${await check.text()}`);
        const p50s: number[] = [];
        const p99s: number[] = [];
        for (let r = 0; r < RUNS; r++) {
          const result = await fixedRate(service.url + url, { rate: QUERY_RATE, headers, duration: 5 });
          if (result.non2xx || result.errors) throw new Error(`${url}: ${result.non2xx} non-2xx`);
          p50s.push(result.p50);
          p99s.push(result.p99);
        }
        const p50 = round(median(p50s), 2);
        rows.push({ name: `audit: GET ${label === 'search' ? '/search?q=' : '/logs?action&user'} one org of ${ORGS}, ${QUERY_RATE} req/s`, figure: p50, unit: 'ms p50', baseline: null, ratio: null, target: '< 50 ms', pass: p50 < 50 });
        rows.push({ name: `audit: GET ${label} p99 (information)`, figure: round(median(p99s), 2), unit: 'ms', baseline: null, ratio: null });
      }

      // Plans of the SQL behind those two requests, for the record: as the service runs it, as
      // dms_app under the organization's scope (its row-level policies decide which indexes a
      // condition may use; a superuser's plan would use ones the service never can).
      const plans: string[] = [];
      await admin.query('begin');
      await admin.query(`select set_config('role', 'dms_app', true), set_config('app.scope', 'organization', true), set_config('app.org_ids', $1, true)`, [`{${org}}`]);
      for (const [label, where] of [
        ['search', `a.org_id = any($1::uuid[]) and audit_search_text(a.action, a.actor_email, a.resource_type, a.resource_name, a.details) like '%host-77%'`],
        ['logs', `a.org_id = any($1::uuid[]) and lower(a.action) like '%script%' and lower(a.actor_email) like '%tech7%'`],
      ] as const) {
        const { rows: plan } = await admin.query(
          `explain (analyze, buffers) select a.*, s.seq, s.prev_checksum, s.checksum
             from audit_entries a left join audit_seals s on s.pending_order = a.pending_order and s.chain_id = a.chain_id
             left join users u on a.actor_type = 'user' and u.id = a.actor_id
            where ${where} order by a.timestamp desc, a.id desc limit 50`, [[org]]);
        plans.push(`-- ${label}\n${plan.map((p: Record<string, string>) => p['QUERY PLAN']).join('\n')}`);
      }
      await admin.query('rollback');
      mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
      writeFileSync(path.join(ROOT, 'bench', 'results', 'audit-plans.txt'), plans.join('\n\n') + '\n');

      // /verify over the 1,000,000-row chain, watching the service's peak memory.
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${service.process.pid}/status`, 'utf8'))![1]) / 1024;
      const rates: number[] = [];
      let peakGrowth = 0;
      for (let r = 0; r < RUNS; r++) {
        const before = rss();
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
        const t0 = performance.now();
        // A toSeq of its own per run (all past the head): /verify caches an unchanged range's answer.
        const res = await fetch(`${service.url}/api/v1/audit-logs/verify?orgId=${bigOrg}&toSeq=${BIG_CHAIN + 1 + r}`, { headers });
        const body = (await res.json()) as { valid: boolean; checked: number };
        const seconds = (performance.now() - t0) / 1000;
        clearInterval(sampler);
        if (!body.valid || body.checked !== BIG_CHAIN) throw new Error(`verify: ${JSON.stringify(body)}`);
        rates.push(body.checked / seconds);
        peakGrowth = Math.max(peakGrowth, peak - before);
      }
      const verifyRate = round(median(rates), 0);
      rows.push({ name: `audit: GET /verify of a ${BIG_CHAIN}-row chain`, figure: verifyRate, unit: 'rows/s', baseline: null, ratio: null, target: '>= 100000 rows/s', pass: verifyRate >= 100_000 });
      rows.push({ name: 'audit: service RSS growth during /verify (flat memory)', figure: round(peakGrowth, 1), unit: 'MiB', baseline: null, ratio: null });
    } finally {
      await service.stop();
    }
  } finally {
    await sealer.stop();
    await db.close();
    await admin.end();
    await database.drop();
  }
  return rows;
}
