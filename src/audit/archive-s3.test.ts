// The retention worker's S3 archive path against a real S3-compatible server (s3rver, in process):
// each expired segment is put as gzipped NDJSON with its anchor before the rows are deleted, and an
// unreachable bucket postpones the cleanup instead of losing rows.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, type TestOrg } from '../../test/support/factory.js';
import { freePort } from '../../test/support/free-port.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { createAuditRecorder } from './recorder.js';
import { checksumOf } from './hash-chain.js';

const DAY = 86_400_000;
const BUCKET = 'dms-audit-archive';
// s3rver accepts requests signed with these; the AWS SDK reads them from the environment.
process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';

describe('audit retention archiving to S3', () => {
  let server: S3rver;
  let endpoint: string;
  let t: TestApp;
  let s3: S3Client;

  before(async () => {
    const port = await freePort();
    server = new S3rver({ address: '127.0.0.1', port, silent: true, directory: mkdtempSync(path.join(os.tmpdir(), 'dms-s3-')), configureBuckets: [{ name: BUCKET }] });
    await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    t = await testApp({ env: { AUDIT_ARCHIVE_S3_BUCKET: BUCKET, AUDIT_ARCHIVE_S3_ENDPOINT: endpoint, AUDIT_ARCHIVE_S3_PREFIX: 'archive/' } });
    s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
  });
  after(async () => {
    s3?.destroy();
    await t?.close();
    await server?.close();
  });

  async function orgWithRows(app: TestApp, old: number, recent: number): Promise<TestOrg> {
    const org = await createOrg(app.db, (await createPartner(app.db)).id);
    await withTenant(app.db, SYSTEM_SCOPE, (tx) => tx.query(`insert into audit_retention_policies (org_id, retention_days, archive_to_object_store) values ($1, 365, true)`, [org.id]));
    for (const [count, at] of [[old, app.clock.now() - 400 * DAY], [recent, app.clock.now()]] as const) {
      const record = createAuditRecorder({ now: () => at, onRecorded: () => {} });
      await withTenant(app.db, SYSTEM_SCOPE, async (tx) => {
        for (let i = 0; i < count; i++) await record(tx, { orgId: org.id, actor: { type: 'system', id: null }, action: 'site.update', details: { i, text: 'grüße' } });
      });
    }
    await app.app.auditSealer.sealNow();
    return org;
  }

  it('puts each segment as gzipped NDJSON with its anchor before deleting it', async () => {
    const org = await orgWithRows(t, 7, 2);
    const [result] = await t.app.auditRetention.runOnce({ orgId: org.id, batchSize: 4 });
    assert.deepEqual([result!.deleted, result!.archived, result!.error], [7, 7, null]);

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `archive/${org.id}/` }));
    const keys = (listed.Contents ?? []).map((o) => o.Key!).sort();
    assert.deepEqual(keys, [`archive/${org.id}/000000000001-000000000004.ndjson.gz`, `archive/${org.id}/000000000005-000000000007.ndjson.gz`]);
    const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: keys[1] }));
    const lines = gunzipSync(await object.Body!.transformToByteArray()).toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual([lines[0].segment.fromSeq, lines[0].segment.toSeq, lines[0].segment.anchorBefore.seq], [5, 7, 4]);
    assert.equal(lines.length, 4);
    for (const row of lines.slice(1)) {
      const { id: _id, checksum, ...payload } = row;
      assert.equal(checksumOf({ ...payload, seq: row.seq }), checksum, `archived row ${row.seq} keeps its checksum`);
    }
    const remaining = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`select count(*)::int as n from audit_logs where org_id = $1`, [org.id]));
    assert.equal(remaining.rows[0]!.n, 2);
  });

  it('postpones the cleanup and reports it when the bucket cannot be reached', async () => {
    const unreachable = await testApp({ db: t.db, env: { AUDIT_ARCHIVE_S3_BUCKET: BUCKET, AUDIT_ARCHIVE_S3_ENDPOINT: `http://127.0.0.1:${await freePort()}` } });
    try {
      const org = await orgWithRows(unreachable, 3, 1);
      const [result] = await unreachable.app.auditRetention.runOnce({ orgId: org.id });
      assert.equal(result!.deleted, 0);
      assert.match(String(result!.error), /archive to s3:\/\/.* failed/);
      const remaining = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`select count(*)::int as n from audit_logs where org_id = $1`, [org.id]));
      assert.equal(remaining.rows[0]!.n, 4, 'nothing deleted without its archive');
    } finally {
      await unreachable.close();
    }
  });
});
