// Outbound delivery catch-up (issue 20): a webhook destination on a loopback receiver replays an
// organization's chain of 100,000 sealed entries from seq 1; the figure is entries received per
// second, from the destination's creation to the last entry (target >= 2,000/s). Webhooks open a
// connection per attempt (no keep-alive: a socket is never shared across destinations, and the
// address guard runs at every connection). The receiver counts distinct webhook-ids and checks
// they arrive in seq order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createSecretBox } from '../src/secret-box.js';
import { newWebhookSecret } from '../src/event-destinations/webhook-transport.js';
import { createDatabase, round, startService, type Row } from './harness.js';

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
  let finished: () => void;
  const allIn = new Promise<void>((resolve) => (finished = resolve));
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const seq = (JSON.parse(body) as { data: { seq: number } }).data.seq;
      if (seq !== lastSeq + 1 && !seen.has(String(req.headers['webhook-id']))) outOfOrder++;
      lastSeq = Math.max(lastSeq, seq);
      seen.add(String(req.headers['webhook-id']));
      res.writeHead(204).end();
      if (seen.size >= ENTRIES) finished();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('MSP', 'msp', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Org', 'org') returning id`, [partner.id]);
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
    const secret = createSecretBox(encryptionKey, 'event-destination-secret').seal(newWebhookSecret());
    const { port } = receiver.address() as AddressInfo;
    const start = performance.now();
    const { rows: [destination] } = await admin.query(
      `insert into event_destinations (org_id, name, kind, url, secret_sealed) values ($1, 'bench', 'webhook', $2, $3) returning id`,
      [org.id, `http://127.0.0.1:${port}/hook`, secret],
    );
    await admin.query(`insert into event_destination_cursors (destination_id, chain_id, org_id, last_seq) values ($1, $2, $2, 0)`, [destination.id, org.id]);
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${seen.size} of ${ENTRIES} delivered in ${TIMEOUT_MS} ms`)), TIMEOUT_MS).unref());
    await Promise.race([allIn, timeout]);
    const seconds = (performance.now() - start) / 1000;
    const rate = round(ENTRIES / seconds, 0);
    return [
      { name: `event-delivery: replay of ${ENTRIES} sealed entries to a loopback webhook (one connection per attempt)`, figure: rate, unit: 'entries/s', baseline: null, ratio: null, target: '>= 2000 entries/s', pass: rate >= 2000 },
      { name: 'event-delivery: entries received out of seq order (first receipt of each)', figure: outOfOrder, unit: 'entries', baseline: null, ratio: null, target: '0', pass: outOfOrder === 0 },
    ];
  } finally {
    receiver.close();
    await admin.end();
    await service.stop();
    await database.drop();
  }
}
