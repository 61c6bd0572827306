// Outbound delivery (issue 20). Sustained: 64 pgbench writers append to one organization's chain
// for BENCH_DURATION seconds with a webhook destination on a loopback receiver, against the same
// writers without one: the writers' throughput ratio (target >= 0.9x) and the lag from an entry's
// timestamp (its insert, so sealing is included) to its receipt, p99 (target < 2 s). Catch-up: the
// destination replays a chain of 100,000 sealed entries from seq 1; entries received per second
// from the destination's creation to the last entry (target >= 2,000/s). A webhook destination
// keeps one keep-alive connection of its own. Ceiling (information): what any in-order sender could
// reach here, serial POSTs from a process that does nothing else, alone and under the writers.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createSecretBox } from '../src/secret-box.js';
import { newWebhookSecret } from '../src/event-destinations/webhook-transport.js';
import { pgbench, WRITE_SECONDS } from './audit.bench.js';
import { createDatabase, ROOT, round, startService, type Row } from './harness.js';

export const name = 'event-delivery';
const ENTRIES = Number(process.env.BENCH_DELIVERY_ENTRIES ?? 100_000);
const TIMEOUT_MS = 600_000;

export async function run(): Promise<Row[]> {
  const encryptionKey = randomBytes(32).toString('base64url');
  const database = await createDatabase();
  const { service } = await startService(database.url, { OUTBOUND_ALLOW_PRIVATE: 'true', APP_ENCRYPTION_KEY: encryptionKey });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  let lastSeq = 0;
  let outOfOrder = 0;
  const seen = new Set<string>();
  const lags: number[] = [];
  const ceiling: number[] = []; // receipt times of the serial poster's requests
  let finished: () => void;
  const allIn = new Promise<void>((resolve) => (finished = resolve));
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/ceiling') {
        JSON.parse(body);
        ceiling.push(performance.now());
        res.writeHead(204).end();
        return;
      }
      const { data } = JSON.parse(body) as { data: { seq: number; timestamp: string } };
      const seq = data.seq;
      lags.push(Date.now() - Date.parse(data.timestamp));
      if (seq !== lastSeq + 1 && !seen.has(String(req.headers['webhook-id']))) outOfOrder++;
      lastSeq = Math.max(lastSeq, seq);
      seen.add(String(req.headers['webhook-id']));
      res.writeHead(204).end();
      if (seen.size >= ENTRIES) finished();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('MSP', 'msp', 'active') returning id`);
    const { rows: [quiet, live, org] } = await admin.query(
      `insert into organizations (partner_id, name, slug) select $1, 'Org ' || g, 'org-' || g from generate_series(1, 3) g returning id`, [partner.id]);
    const url = `http://127.0.0.1:${port}/hook`;
    const box = createSecretBox(encryptionKey, 'event-destination-secret');

    // Sustained: the same writers without a destination, then with one on their organization.
    const drained = async () => {
      for (;;) {
        const { rows: [left] } = await admin.query(`select count(*)::int as n from audit_pending`);
        if (left.n === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    let start = performance.now();
    const alone = (await pgbench(database.url, quiet.id)) / ((performance.now() - start) / 1000);
    await drained();

    // The ceiling of delivery in order: serial POSTs from a process that does nothing else
    // (bench/serial-poster.ts) to the same receiver, counted on receipt, first with nothing else
    // running, then while the same writers run (their first and last second left out).
    const poster = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'serial-poster.ts'), `http://127.0.0.1:${port}/ceiling`], { cwd: ROOT, stdio: 'ignore' });
    const between = (from: number, to: number) => ceiling.filter((at) => at >= from && at < to).length / ((to - from) / 1000);
    let serialIdle: number;
    let serialLoaded: number;
    let ceilingWriters: number;
    try {
      while (ceiling.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      const idleFrom = performance.now();
      await new Promise((resolve) => setTimeout(resolve, (WRITE_SECONDS * 1000) / 2));
      serialIdle = between(idleFrom, performance.now());
      start = performance.now();
      ceilingWriters = (await pgbench(database.url, quiet.id)) / ((performance.now() - start) / 1000);
      serialLoaded = between(start + 1000, performance.now() - 1000);
    } finally {
      poster.kill();
    }
    ceiling.length = 0;
    await drained();

    const { rows: [liveDestination] } = await admin.query(
      `insert into event_destinations (org_id, name, kind, url, secret_sealed) values ($1, 'live', 'webhook', $2, $3) returning id`, [live.id, url, box.seal(newWebhookSecret())]);
    await admin.query(`insert into event_destination_cursors (destination_id, chain_id, org_id, last_seq) values ($1, $2, $2, 0)`, [liveDestination.id, live.id]);
    start = performance.now();
    const written = await pgbench(database.url, live.id);
    const withDestination = written / ((performance.now() - start) / 1000);
    const sustainedDeadline = Date.now() + 120_000;
    while (seen.size < written && Date.now() < sustainedDeadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const sustainedDelivered = seen.size;
    const sortedLags = [...lags].sort((a, b) => a - b);
    const lagP99 = sortedLags[Math.floor(sortedLags.length * 0.99)] ?? Infinity;
    await admin.query(`update event_destinations set enabled = false`);
    seen.clear();
    lastSeq = 0;
    outOfOrder = 0;

    await admin.query(
      `insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id, resource_name, details, result)
       select gen_random_uuid(), $1, now(), 'user', gen_random_uuid(), 'tech@msp.example', 'device.update', 'device', gen_random_uuid(), 'host-' || g,
              jsonb_build_object('n', g), 'success'
         from generate_series(1, $2::int) g`,
      [org.id, ENTRIES],
    );
    for (;;) {
      const { rows: [left] } = await admin.query(`select count(*)::int as n from audit_pending`);
      if (left.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await admin.query('vacuum analyze audit_entries, audit_seals, audit_pending');

    // The destination as the API would store it (the secret sealed with the service's key), with
    // its cursor at 0: a replay of the whole chain.
    const secret = box.seal(newWebhookSecret());
    start = performance.now();
    const { rows: [destination] } = await admin.query(
      `insert into event_destinations (org_id, name, kind, url, secret_sealed) values ($1, 'bench', 'webhook', $2, $3) returning id`,
      [org.id, url, secret],
    );
    await admin.query(`insert into event_destination_cursors (destination_id, chain_id, org_id, last_seq) values ($1, $2, $2, 0)`, [destination.id, org.id]);
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${seen.size} of ${ENTRIES} delivered in ${TIMEOUT_MS} ms`)), TIMEOUT_MS).unref());
    await Promise.race([allIn, timeout]);
    const seconds = (performance.now() - start) / 1000;
    const rate = round(ENTRIES / seconds, 0);
    const ratio = round(withDestination / alone);
    return [
      { name: `event-delivery: 64 pgbench writers with a webhook destination on their organization`, figure: round(withDestination, 0), unit: 'rows/s', baseline: round(alone, 0), ratio, target: '>= 0.9x without', pass: ratio >= 0.9 },
      { name: `event-delivery: lag from entry to receipt while they write, p99 (${sustainedDelivered} of ${written} delivered)`, figure: lagP99, unit: 'ms', baseline: null, ratio: null, target: '< 2000 ms, all delivered', pass: lagP99 < 2000 && sustainedDelivered === written },
      { name: `event-delivery: in-order ceiling: serial POSTs to the same receiver from a process of their own, nothing else running (information)`, figure: round(serialIdle, 0), unit: 'req/s', baseline: null, ratio: null },
      { name: `event-delivery: in-order ceiling: the same while the 64 writers run (${round(ceilingWriters, 0)} rows/s; information)`, figure: round(serialLoaded, 0), unit: 'req/s', baseline: null, ratio: null },
      { name: `event-delivery: replay of ${ENTRIES} sealed entries to a loopback webhook`, figure: rate, unit: 'entries/s', baseline: null, ratio: null, target: '>= 2000 entries/s', pass: rate >= 2000 },
      { name: 'event-delivery: entries received out of seq order (first receipt of each)', figure: outOfOrder, unit: 'entries', baseline: null, ratio: null, target: '0', pass: outOfOrder === 0 },
    ];
  } finally {
    receiver.close();
    await admin.end();
    await service.stop();
    await database.drop();
  }
}
