// Two service processes on PostgreSQL + Redis sharing a webhook destination; the one sending it is
// killed with SIGKILL mid-stream. The survivor takes the destination over once the dead lease runs
// out, and the receiver ends with every sealed entry, first receipts in seq order, and duplicates
// only at the kill point (the batch the dead instance had sent but not recorded).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { freePort } from '../../test/support/free-port.js';
import { privateTestDatabase, testRedisUrl } from '../../test/support/app.js';
import { createSecretBox } from '../secret-box.js';
import { newWebhookSecret } from './webhook-transport.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startInstance(env: Record<string, string>): Promise<ChildProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dms-failover-')), LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance exited: ${stderr}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return child;
    } catch {
      // not up yet
    }
    assert.ok(Date.now() < deadline, `instance not ready: ${stderr}`);
    await sleep(200);
  }
}

describe('event delivery across a killed instance', { skip: !process.env.TEST_DATABASE_URL && 'needs PostgreSQL' }, () => {
  let database: Awaited<ReturnType<typeof privateTestDatabase>>;
  const instances: ChildProcess[] = [];
  let receiver: http.Server;
  const receipts: number[] = [];
  let admin: pg.Client;

  before(async () => {
    database = await privateTestDatabase('postgres');
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        receipts.push((JSON.parse(body) as { data: { seq: number } }).data.seq);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    admin = new pg.Client({ connectionString: database.url! });
    await admin.connect();
  });
  after(async () => {
    for (const child of instances) child.kill('SIGKILL');
    await admin?.end();
    receiver?.close();
    await database?.drop();
  });

  it('ends with every entry, in order, duplicates only where the sender died', async (ctx) => {
    const redis = await testRedisUrl();
    const encryptionKey = randomBytes(32).toString('base64url');
    const env = {
      DATABASE_URL: database.url!, OUTBOUND_ALLOW_PRIVATE: 'true', APP_ENCRYPTION_KEY: encryptionKey,
      JWT_SECRET: randomBytes(32).toString('base64url'), BOOTSTRAP_ADMIN_EMAIL: 'admin@example.test', BOOTSTRAP_ADMIN_PASSWORD: 'failover-password-1',
      ...(redis ? { REDIS_URL: redis } : {}),
    };
    const first = await startInstance(env);
    instances.push(first);
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('MSP', 'msp-failover', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Org', 'org-failover') returning id`, [partner.id]);
    const { port } = receiver.address() as AddressInfo;
    const { rows: [destination] } = await admin.query(
      `insert into event_destinations (org_id, name, kind, url, secret_sealed) values ($1, 'failover', 'webhook', $2, $3) returning id`,
      [org.id, `http://127.0.0.1:${port}/hook`, createSecretBox(encryptionKey, 'event-destination-secret').seal(newWebhookSecret())],
    );
    await admin.query(`insert into event_destination_cursors (destination_id, chain_id, org_id, last_seq) values ($1, $2, $2, 0)`, [destination.id, org.id]);

    const write = (count: number) => admin.query(
      `insert into audit_entries (id, org_id, timestamp, actor_type, action, resource_type, details, result)
       select gen_random_uuid(), $1, now(), 'system', 'site.update', 'site', jsonb_build_object('n', g), 'success' from generate_series(1, $2::int) g`,
      [org.id, count],
    );
    // The first instance takes the destination and sends; then the second joins.
    await write(200);
    for (let i = 0; receipts.length === 0; i++) {
      assert.ok(i < 200, 'the first instance delivers');
      await sleep(50);
    }
    instances.push(await startInstance(env));
    // A stream of entries; the sender is killed in the middle of it.
    let killedAt = 0;
    let receivedAtKill = 0;
    for (let round = 0; round < 40; round++) {
      await write(50);
      if (round === 10) {
        first.kill('SIGKILL');
        killedAt = Date.now();
        receivedAtKill = receipts.length;
      }
      await sleep(50);
    }
    const total = 200 + 40 * 50;
    const deadline = Date.now() + 60_000;
    while (new Set(receipts).size < total) {
      assert.ok(Date.now() < deadline, `received ${new Set(receipts).size} of ${total}`);
      await sleep(100);
    }

    ctx.diagnostic(`killed after ${receivedAtKill} receipts; all ${total} in ${Date.now() - killedAt} ms later; ${receipts.length - total} duplicates`);
    const firsts = receipts.filter((seq, i) => receipts.indexOf(seq) === i);
    assert.deepEqual(firsts, Array.from({ length: total }, (_, i) => i + 1), 'every entry once, first receipts in seq order');
    const repeated = [...new Set(receipts.filter((seq, i) => receipts.indexOf(seq) !== i))].sort((a, b) => a - b);
    if (repeated.length > 0) {
      assert.equal(repeated.at(-1)! - repeated[0]! + 1, repeated.length, `duplicates form one run at the kill point: ${repeated.join(',')}`);
      assert.ok(repeated.length <= 100, 'at most the batch in flight');
    }
    // The cursor moves after the receiver has answered, so the last batch can be received before
    // it is recorded: wait for it rather than read it once.
    let lastSeq = 0;
    for (const until = Date.now() + 10_000; lastSeq < total && Date.now() < until; await sleep(100)) {
      const { rows: [cursor] } = await admin.query(`select last_seq from event_destination_cursors where destination_id = $1`, [destination.id]);
      lastSeq = Number(cursor.last_seq);
    }
    assert.equal(lastSeq, total);
  });
});
