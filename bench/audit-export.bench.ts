// Audit export for SIEM pulls: GET /audit-logs/export of 10,000 rows as ndjson through an API key with audit:export
// (a SIEM pull) against the service as a process: time to the last byte (target < 1 s) and the
// service's RSS while it streams (flat memory). Then the offline verifier, called as a function,
// over that export and over 100,000 rows pulled in resumed pages (target >= 100,000 rows/s).
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { generateKey } from '../src/api-keys/key-material.js';
import { verifyExport } from '../src/audit-verifier/verify-export.js';
import { createDatabase, median, round, RUNS, startService, type Row } from './harness.js';

export const name = 'audit-export';

const EXPORT_ROWS = 10_000;
const CHAIN_ROWS = Number(process.env.BENCH_EXPORT_CHAIN_ROWS ?? 100_000);

async function seedChain(admin: pg.Client, orgId: string, count: number): Promise<void> {
  // Pending rows, as the recorder writes them; the service's sealer chains them.
  await admin.query(
    `insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id,
                                resource_name, details, ip_address, user_agent, result)
     select gen_random_uuid(), $1, date_trunc('milliseconds', now() - (($2::int - g) * interval '10 milliseconds')), 'user', gen_random_uuid(),
            'tech' || (g % 50) || '@msp.example', (array['user.login', 'device.update', 'script.execute', 'site.update'])[1 + g % 4],
            'device', gen_random_uuid(), 'host-' || g || ', "rack" ' || (g % 9),
            jsonb_build_object('n', g, 'changedFields', jsonb_build_array('name'), 'before', jsonb_build_object('name', 'old-' || g), 'note', 'ünïcode ' || md5(g::text)),
            '10.0.' || (g % 250) || '.1', 'agent/1.0 (bench)', 'success'
       from generate_series(1, $2::int) g`,
    [orgId, count],
  );
  const deadline = Date.now() + 600_000;
  for (;;) {
    const { rows: [left] } = await admin.query(`select count(*)::int as n from audit_pending`);
    if (left.n === 0) return;
    if (Date.now() > deadline) throw new Error(`the sealer left ${left.n} rows pending`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Streams a GET to a file; returns the seconds to the last byte. */
function download(url: string, headers: Record<string, string>, file: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`${url}: ${res.statusCode}`));
        return;
      }
      pipeline(res, createWriteStream(file)).then(() => resolve((performance.now() - started) / 1000), reject);
    }).on('error', reject);
  });
}

const lineCount = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const { service } = await startService(database.url);
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dms-export-bench-'));
  const rows: Row[] = [];
  let dropped = false;
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench MSP', 'bench-export', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Customer', 'customer') returning id`, [partner.id]);
    const key = generateKey();
    await admin.query(
      `insert into api_keys (org_id, name, key_hash, key_prefix, scopes, rate_limit) values ($1, 'SIEM', $2, $3, '{audit:export}', 100000)`,
      [org.id, key.keyHash, key.keyPrefix],
    );
    const seedStart = performance.now();
    await seedChain(admin, org.id, CHAIN_ROWS);
    await admin.query('vacuum analyze audit_entries, audit_seals, audit_pending'); // settle the tables (and the emptied queue) before measuring
    process.stderr.write(`  seeded and sealed ${CHAIN_ROWS} rows in ${round((performance.now() - seedStart) / 1000, 1)} s\n`);

    const headers = { 'x-api-key': key.key };
    const exportUrl = (query: string) => `${service.url}/api/v1/audit-logs/export?format=ndjson&orgId=${org.id}&${query}`;
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${service.process.pid}/status`, 'utf8'))![1]) / 1024;

    // Warm up (JIT, pool), then RUNS timed exports of 10,000 rows, newest first, sampling RSS; and,
    // to tell streaming from buffering, the RSS peak of exports a tenth the size.
    const small = path.join(dir, 'small.ndjson');
    await download(exportUrl('limit=1000'), headers, small);
    const peakGrowth = async (limit: number, file: string) => {
      const before = rss();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
      const times: number[] = [];
      for (let r = 0; r < RUNS; r++) times.push(await download(exportUrl(`limit=${limit}`), headers, file));
      clearInterval(sampler);
      return { before, growth: peak - before, times };
    };
    const tenth = await peakGrowth(EXPORT_ROWS / 10, small);
    const file = path.join(dir, 'export.ndjson');
    const { before: rssBefore, growth, times } = await peakGrowth(EXPORT_ROWS, file);
    const rssAfter = rss();
    const exported = lineCount(file);
    if (exported !== EXPORT_ROWS) throw new Error(`export returned ${exported} rows, not ${EXPORT_ROWS}`);
    const ms = round(median(times) * 1000, 1);
    rows.push({ name: `audit-export: GET /export ndjson of ${EXPORT_ROWS} rows (API key, to last byte)`, figure: ms, unit: 'ms', baseline: null, ratio: null, target: '< 1000 ms', pass: ms < 1000 });
    rows.push({ name: 'audit-export: service RSS before / after the exports (information)', figure: round(rssAfter, 1), unit: 'MiB after', baseline: round(rssBefore, 1), ratio: null });
    rows.push({
      name: `audit-export: service RSS peak growth while streaming ${RUNS} x ${EXPORT_ROWS} rows (baseline: ${RUNS} x ${EXPORT_ROWS / 10} rows; flat memory)`,
      figure: round(growth, 1), unit: 'MiB', baseline: round(tenth.growth, 1), ratio: null, target: '< 64 MiB', pass: growth < 64,
    });

    // A puller's file: the whole chain in resumed pulls of 10,000 (afterSeq), appended to one file.
    const pulled = path.join(dir, 'pulled.ndjson');
    let afterSeq = 0;
    for (;;) {
      const page = path.join(dir, `pull-${afterSeq}.ndjson`);
      await download(exportUrl(`afterSeq=${afterSeq}`), headers, page);
      const text = readFileSync(page, 'utf8');
      if (text === '') break;
      const lines = text.trimEnd().split('\n');
      await pipeline(async function* () { yield text; }, createWriteStream(pulled, { flags: 'a' }));
      afterSeq = (JSON.parse(lines[lines.length - 1]!) as { seq: number }).seq;
      rmSync(page);
      if (lines.length < EXPORT_ROWS) break;
    }

    // Verification is offline: the service and the database are gone by now, as for an auditor.
    await admin.end();
    await service.stop();
    await database.drop();
    dropped = true;

    // The offline verifier, as a function: over the 10,000-row export (newest first: rows out of seq
    // order) once cold, as one CLI run (JIT and worker threads starting); then warm, over the pulled
    // chain and over the export again.
    const timeVerify = async (f: string) => {
      const started = performance.now();
      const report = await verifyExport({ file: f });
      return { report, seconds: (performance.now() - started) / 1000 };
    };
    const cold = await timeVerify(file);
    rows.push({ name: `audit-export: offline verify of the ${EXPORT_ROWS}-row export, first call (cold, information)`, figure: round(exported / cold.seconds, 0), unit: 'rows/s', baseline: null, ratio: null });
    const chainRates: number[] = [];
    let chainRows = 0;
    for (let r = 0; r < RUNS; r++) {
      const { report, seconds } = await timeVerify(pulled);
      const chain = report.chains.find((c) => c.orgId === org.id);
      if (!report.valid || !chain || chain.firstSeq !== 1) throw new Error(`the pulled chain does not verify: ${JSON.stringify(report.chains)}`);
      chainRows = chain.rows;
      chainRates.push(chain.rows / seconds);
    }
    const chainRate = round(median(chainRates), 0);
    rows.push({
      name: `audit-export: offline verify of ${chainRows} rows pulled with afterSeq (seq order)`,
      figure: chainRate, unit: 'rows/s', baseline: null, ratio: null, target: '>= 100000 rows/s', pass: chainRate >= 100_000,
    });
    const verifyRates: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const { report, seconds } = await timeVerify(file);
      if (!report.valid) throw new Error(`the export does not verify: ${JSON.stringify(report.chains)}`);
      verifyRates.push(exported / seconds);
    }
    process.stderr.write(`  verified ${exported} rows (${round(statSync(file).size / 2 ** 20, 1)} MiB): ${verifyRates.map((r) => round(r, 0)).join(', ')} rows/s\n`);
    const rate = round(median(verifyRates), 0);
    rows.push({ name: `audit-export: offline verify of the ${EXPORT_ROWS}-row export`, figure: rate, unit: 'rows/s', baseline: null, ratio: null, target: '>= 100000 rows/s', pass: rate >= 100_000 });

    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (!dropped) {
      await admin.end();
      await service.stop();
      await database.drop();
    }
  }
}
