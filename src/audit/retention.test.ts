// Audit retention through HTTP and the worker: the policy (defaults, validation, reach, audit),
// deleting exactly the expired prefix in batches with an anchor that /verify accepts, archives
// written before deletion, a crash between archive and delete, an archive store that is down, and
// two workers at once.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { privateTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { createAuditRecorder } from './recorder.js';
import { checksumOf } from './hash-chain.js';

const DAY = 86_400_000;

describe('audit retention', () => {
  let t: TestApp;
  let system: Session;

  before(async () => {
    t = await testApp();
    system = await login(t.app, await createUser(t.db, { scope: 'system' }));
  });
  after(() => t.close());

  /** `old` rows 400 days back, then `recent` rows now, all sealed. */
  async function seed(org: TestOrg, old: number, recent: number) {
    for (const [count, at] of [[old, t.clock.now() - 400 * DAY], [recent, t.clock.now()]] as const) {
      const record = createAuditRecorder({ now: () => at, onRecorded: () => {} });
      await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
        for (let i = 0; i < count; i++) await record(tx, { orgId: org.id, actor: { type: 'system', id: null }, action: 'site.update', details: { i } });
      });
    }
    await t.app.auditSealer.sealNow();
  }
  const verify = async (org: TestOrg) => (await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/verify?orgId=${org.id}` })).json();
  const newOrg = async () => createOrg(t.db, (await createPartner(t.db)).id);

  it('serves and changes the policy: defaults, validation, reach, audit', async () => {
    const org = await newOrg();
    const other = await newOrg();
    const admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
    const call = as(t.app, admin);
    assert.deepEqual((await call({ method: 'GET', url: '/api/v1/audit-logs/retention' })).json(), { orgId: org.id, retentionDays: 365, archiveToObjectStore: false, lastCleanupAt: null });
    const put = await call({ method: 'PUT', url: '/api/v1/audit-logs/retention', payload: { retentionDays: 30, archiveToObjectStore: true } });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(put.json(), { orgId: org.id, retentionDays: 30, archiveToObjectStore: true, lastCleanupAt: null });
    for (const payload of [{ retentionDays: 0 }, { retentionDays: 3651 }, { retentionDays: 'x' }, { retentionDays: 1.5 }, { lastCleanupAt: '2026-01-01T00:00:00Z' }]) {
      assertProblem(await call({ method: 'PUT', url: '/api/v1/audit-logs/retention', payload }), 400, 'VALIDATION_FAILED');
    }
    assertProblem(await call({ method: 'PUT', url: '/api/v1/audit-logs/retention', payload: {} }), 400, 'EMPTY_UPDATE');
    assertProblem(await call({ method: 'GET', url: `/api/v1/audit-logs/retention?orgId=${other.id}` }), 404, 'NOT_FOUND');
    assertProblem(await as(t.app, system)({ method: 'GET', url: '/api/v1/audit-logs/retention' }), 400, 'VALIDATION_FAILED');
    assert.equal((await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/retention?orgId=${org.id}` })).json().retentionDays, 30);
    const readonly = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' }));
    assertProblem(await as(t.app, readonly)({ method: 'PUT', url: '/api/v1/audit-logs/retention', payload: { retentionDays: 5 } }), 403, 'PERMISSION_DENIED');
    const entry = (await call({ method: 'GET', url: '/api/v1/audit-logs/logs?action=audit.retention.update' })).json().data[0];
    assert.deepEqual([entry.details.changedFields, entry.details.before.retentionDays, entry.details.after.retentionDays], [['retentionDays', 'archiveToObjectStore'], 365, 30]);
  });

  it('deletes exactly the expired prefix in batches and anchors the chain so /verify passes', async () => {
    const org = await newOrg();
    await seed(org, 23, 7);
    const [result] = await t.app.auditRetention.runOnce({ orgId: org.id, batchSize: 5 });
    assert.deepEqual([result!.deleted, result!.anchorSeq, result!.error], [23, 23, null]);
    const v = await verify(org);
    assert.equal(v.valid, true, JSON.stringify(v));
    assert.equal(v.anchor.seq, 23);
    assert.deepEqual([v.checked, v.firstSeq, v.lastSeq], [7, 24, 30]);
    const logs = (await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=${org.id}&limit=100` })).json();
    assert.equal(logs.pagination.total, 7);
    const policy = (await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/retention?orgId=${org.id}` })).json();
    assert.ok(policy.lastCleanupAt);
    // A second run finds nothing more to do; new rows keep chaining after the survivors.
    assert.equal((await t.app.auditRetention.runOnce({ orgId: org.id }))[0]!.deleted, 0);
    await seed(org, 0, 2);
    assert.equal((await verify(org)).valid, true);
  });

  it('archives each segment durably before deleting it, as gzipped NDJSON with its anchors', async () => {
    const org = await newOrg();
    await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`insert into audit_retention_policies (org_id, retention_days, archive_to_object_store) values ($1, 365, true)`, [org.id]));
    await seed(org, 12, 3);
    const [result] = await t.app.auditRetention.runOnce({ orgId: org.id, batchSize: 5 });
    assert.deepEqual([result!.deleted, result!.archived, result!.error], [12, 12, null]);
    const dir = path.join(t.config.dataDir, 'audit-archive', org.id);
    const files = readdirSync(dir).sort();
    assert.deepEqual(files, ['000000000001-000000000005.ndjson.gz', '000000000006-000000000010.ndjson.gz', '000000000011-000000000012.ndjson.gz']);
    const lines = gunzipSync(readFileSync(path.join(dir, files[1]!))).toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual([lines[0].segment.fromSeq, lines[0].segment.toSeq, lines[0].segment.anchorBefore.seq], [6, 10, 5]);
    assert.equal(lines.length, 6);
    for (const row of lines.slice(1)) {
      const { id: _id, checksum, ...payload } = row;
      assert.equal(checksumOf({ ...payload, seq: row.seq }), checksum, `archived row ${row.seq} keeps its checksum`);
    }
    assert.equal((await verify(org)).valid, true);
  });

  it('loses nothing and deletes nothing twice when it crashes between archive and delete', async () => {
    const org = await newOrg();
    await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`insert into audit_retention_policies (org_id, retention_days, archive_to_object_store) values ($1, 365, true)`, [org.id]));
    await seed(org, 8, 2);
    await assert.rejects(t.app.auditRetention.runOnce({ orgId: org.id, hooks: { afterArchive: () => { throw new Error('crash'); } } }), /crash/);
    assert.equal((await verify(org)).checked, 10, 'nothing deleted');
    assert.ok(existsSync(path.join(t.config.dataDir, 'audit-archive', org.id, '000000000001-000000000008.ndjson.gz')));
    const [again] = await t.app.auditRetention.runOnce({ orgId: org.id });
    assert.deepEqual([again!.deleted, again!.anchorSeq], [8, 8]);
    const v = await verify(org);
    assert.deepEqual([v.valid, v.checked, v.firstSeq], [true, 2, 9]);
  });

  it('postpones the cleanup and reports it when the archive store is down', async () => {
    const down = await testApp({ db: t.db });
    try {
      writeFileSync(path.join(down.config.dataDir, 'audit-archive'), 'not a directory');
      const org = await newOrg();
      await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`insert into audit_retention_policies (org_id, retention_days, archive_to_object_store) values ($1, 365, true)`, [org.id]));
      await seed(org, 4, 1);
      const [result] = await down.app.auditRetention.runOnce({ orgId: org.id });
      assert.equal(result!.deleted, 0);
      assert.match(String(result!.error), /archive to .* failed/);
      assert.equal((await verify(org)).checked, 5);
      const policy = (await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/retention?orgId=${org.id}` })).json();
      assert.equal(policy.lastCleanupAt, null, 'a postponed cleanup is not a cleanup');
    } finally {
      await down.close();
    }
  });

  it('keeps a policy for the platform chain, read and set by system scope, and prunes that chain too', async () => {
    // A database of its own: pruning the platform chain of the shared one would reach other files' rows.
    const { db, drop } = await privateTestDatabase();
    const p = await testApp({ db });
    try {
      const org = await createOrg(db, (await createPartner(db)).id);
      const orgAdmin = await login(p.app, await createUser(db, { scope: 'organization', orgId: org.id }));
      assertProblem(await as(p.app, orgAdmin)({ method: 'GET', url: '/api/v1/audit-logs/retention?orgId=platform' }), 404, 'NOT_FOUND');
      const sysUser = await createUser(db, { scope: 'system' });
      const call = as(p.app, await loginWithMfa(p.app, sysUser, p.clock));
      const url = '/api/v1/audit-logs/retention?orgId=platform';
      assert.deepEqual((await call({ method: 'GET', url })).json(), { orgId: null, retentionDays: 365, archiveToObjectStore: false, lastCleanupAt: null });
      const put = await call({ method: 'PUT', url, payload: { retentionDays: 30 } });
      assert.deepEqual(put.json(), { orgId: null, retentionDays: 30, archiveToObjectStore: false, lastCleanupAt: null });
      const change = (await call({ method: 'GET', url: '/api/v1/audit-logs/logs?orgId=platform&action=audit.retention.update' })).json().data;
      assert.equal(change.length, 1);

      // Everything on the platform chain so far (sign-ins, the change above) expires 400 days on.
      await p.app.auditSealer.sealNow();
      const before = await withTenant(db, SYSTEM_SCOPE, (tx) => tx.query<{ n: number }>(`select count(*)::int as n from audit_logs where org_id is null`));
      p.clock.advance(400 * DAY);
      const record = createAuditRecorder({ now: p.clock.now, onRecorded: () => {} });
      await withTenant(db, SYSTEM_SCOPE, (tx) => record(tx, { orgId: null, actor: { type: 'system', id: null }, action: 'partner.create' }));
      await p.app.auditSealer.sealNow();
      const results = await p.app.auditRetention.runOnce();
      const platform = results.find((r) => r.orgId === null)!;
      assert.deepEqual([platform.deleted, platform.anchorSeq, platform.error], [before.rows[0]!.n, before.rows[0]!.n, null]);
      const fresh = as(p.app, await login(p.app, await createUser(db, { scope: 'system' })));
      const v = (await fresh({ method: 'GET', url: '/api/v1/audit-logs/verify?orgId=platform' })).json();
      assert.deepEqual([v.valid, v.anchor.seq, v.firstSeq], [true, before.rows[0]!.n, before.rows[0]!.n + 1]);
      assert.ok((await fresh({ method: 'GET', url })).json().lastCleanupAt);
    } finally {
      await p.close();
      await drop();
    }
  });

  it('is safe when two workers run at once', async () => {
    const org = await newOrg();
    await seed(org, 40, 5);
    const other = await testApp({ db: t.db });
    try {
      const results = await Promise.all([t.app.auditRetention.runOnce({ orgId: org.id, batchSize: 3 }), other.app.auditRetention.runOnce({ orgId: org.id, batchSize: 7 })]);
      assert.equal(results.flat().reduce((n, r) => n + r.deleted, 0), 40);
      const v = await verify(org);
      assert.deepEqual([v.valid, v.checked, v.anchor.seq], [true, 5, 40]);
    } finally {
      await other.close();
    }
  });
});
