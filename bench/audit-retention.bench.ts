// Audit retention: retention of 1,000,000 expired rows in one organization while 32 pgbench writers keep
// appending to the same chain. Targets: the writers' rate during retention is at least half their
// rate without it (same run), and the chain verifies afterwards from its new anchor.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { SYSTEM_SCOPE } from '../src/db/tenant-scope.js';
import type { Caller } from '../src/http/auth.js';
import { createFileArchiveStore } from '../src/audit/archive-store.js';
import { createAuditService } from '../src/audit/audit.service.js';
import { createAuditCheckpoints, loadAuditSigner } from '../src/audit/checkpoints.js';
import { createAuditRecorder } from '../src/audit/recorder.js';
import { createRetentionService } from '../src/audit/retention.service.js';
import { createSealer } from '../src/audit/sealer.js';
import { createDatabase, round, type Row } from './harness.js';

export const name = 'audit-retention';
const EXPIRED = 1_000_000;
const WRITERS = 32;
const WRITE_SECONDS = 15;

const PGBENCH_SCRIPT = `\\set n random(1, 1000000000)
insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id, resource_name, details, ip_address, user_agent, result) values (gen_random_uuid(), ':org', date_trunc('milliseconds', now()), 'user', gen_random_uuid(), 'tech@msp.example', 'device.update', 'device', gen_random_uuid(), 'host-' || :n, jsonb_build_object('n', :n), '203.0.113.9', 'bench/1.0', 'success');
`;

async function pgbench(url: string, orgId: string): Promise<number> {
  const script = path.join(os.tmpdir(), `dms-retention-${process.pid}.sql`);
  writeFileSync(script, PGBENCH_SCRIPT);
  const { stdout } = await promisify(execFile)('pgbench', ['-n', '-c', String(WRITERS), '-j', '2', '-T', String(WRITE_SECONDS), '-f', script, '-D', `org=${orgId}`, url]);
  const processed = /number of transactions actually processed: (\d+)/.exec(stdout);
  if (!processed) throw new Error(`pgbench: ${stdout}`);
  return Number(processed[1]) / WRITE_SECONDS;
}

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const db = await openDatabase({ url: database.url, pgliteDir: 'memory://', poolSize: 16 });
  const log = (err: unknown) => console.error(err);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dms-retention-'));
  const checkpoints = createAuditCheckpoints({ db, signer: await loadAuditSigner({ auditSigningKey: null, dataDir }), everyRows: 10_000, everyMinutes: 5, now: Date.now, log });
  const sealer = createSealer({ db, log, onSealed: checkpoints.afterSeal });
  const retention = createRetentionService({
    db,
    recordAudit: createAuditRecorder({ now: Date.now, onRecorded: () => {} }),
    archive: createFileArchiveStore(path.join(dataDir, 'archive')),
    checkpoints,
    intervalMinutes: 0,
    now: Date.now,
    log: (level, message) => console.error(level, message),
  });
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench', 'bench', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Org', 'org') returning id`, [partner.id]);
    // A million rows from 400 days ago, in time order, sealed into the chain.
    await admin.query(
      `insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details, result)
       select gen_random_uuid(), $1, date_trunc('milliseconds', now() - interval '400 days' + g * interval '1 ms'), 'system', null,
              'device.update', 'device', gen_random_uuid(), jsonb_build_object('n', g), 'success'
         from generate_series(1, $2) g order by g`,
      [org.id, EXPIRED],
    );
    await sealer.sealNow();
    await admin.query('analyze audit_entries, audit_seals, audit_pending');
    sealer.start();

    const alone = await pgbench(database.url, org.id);
    const started = performance.now();
    const [during, results] = await Promise.all([pgbench(database.url, org.id), retention.runOnce({ orgId: org.id })]);
    const seconds = (performance.now() - started) / 1000;
    await sealer.sealNow();
    const system = { scope: 'system', tenant: SYSTEM_SCOPE, canAccessOrg: () => true, accessibleOrgIds: null, orgId: null } as unknown as Caller;
    const verified = await createAuditService({ db, verifyPool: null }).verify(system, { orgId: org.id });
    const deleted = results[0]!.deleted;
    return [
      { name: `audit-retention: writers' rate while ${deleted.toLocaleString('en')} expired rows are deleted (${WRITERS} pgbench writers)`, figure: round(during, 0), unit: 'rows/s', baseline: round(alone, 0), ratio: round(during / alone), target: '>= 0.5x without retention', pass: during / alone >= 0.5 && deleted === EXPIRED },
      { name: 'audit-retention: time to delete the expired million (information)', figure: round(seconds, 1), unit: 's', baseline: null, ratio: null },
      { name: `audit-retention: /verify afterwards (anchor ${verified.anchor?.seq ?? 'none'}, ${verified.checked} rows checked)`, figure: verified.valid ? 1 : 0, unit: 'valid', baseline: null, ratio: null, target: 'valid', pass: verified.valid },
    ];
  } finally {
    await retention.stop();
    await sealer.stop();
    await checkpoints.stop();
    await db.close();
    await admin.end();
    await database.drop();
  }
}
