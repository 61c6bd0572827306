// The verification pool on its own: ranges queue behind busy workers, warm workers retire after
// a quiet spell and come back on demand, and failures reach the caller as errors. Without a
// database (PGlite) its workers hash the batches they are sent.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import pg from 'pg';
import { SYSTEM_SCOPE } from '../db/tenant-scope.js';
import { testApp } from '../../test/support/app.js';
import { createOrg, createPartner } from '../../test/support/factory.js';
import type { ChainLinkRow } from './audit.repo.js';
import { countVersions } from './chain-verifier.js';
import { sealRows } from './hash-chain.js';
import { createVerifyPool } from './verify-pool.js';

const ROWS = 3000;

async function chainOf(rows: number) {
  const t = await testApp();
  const privileged = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await privileged.connect();
  const org = await createOrg(t.db, (await createPartner(t.db)).id);
  await privileged.query(
    `insert into audit_entries (id, org_id, timestamp, actor_type, action, resource_type, resource_name, details, result)
     select gen_random_uuid(), $1, date_trunc('milliseconds', now()), 'system', 'device.update', 'device', 'host-' || g, jsonb_build_object('n', g), 'success'
       from generate_series(1, $2::int) g`,
    [org.id, rows],
  );
  await t.app.auditSealer.sealNow();
  return { t, privileged, org, close: async () => { await privileged.end(); await t.close(); } };
}

describe('the verification pool', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('runs more ranges than it has workers, each once, and retires idle and failed workers', async () => {
    const { t, org, close } = await chainOf(ROWS);
    const pool = createVerifyPool({ connection: t.db.connection!, size: 2, idleMs: 200 });
    try {
      const size = ROWS / 6;
      const jobs = Array.from({ length: 6 }, (_, i) => ({ chainId: org.id, fromSeq: i * size + 1, toSeq: (i + 1) * size, previous: i === 0 ? null : ('stored' as const) }));
      const results = await Promise.all(jobs.map((job) => pool.verify(SYSTEM_SCOPE, job)));
      assert.ok(pool.liveWorkers() <= 2);
      assert.deepEqual(results.map((r) => [r.firstSeq, r.last?.seq, r.checked, r.brokenAt]), jobs.map((j) => [j.fromSeq, j.toSeq, size, null]));

      // Warm workers leave after the quiet spell; the next range starts a new one.
      for (let waited = 0; pool.liveWorkers() > 0 && waited < 5000; waited += 50) await sleep(50);
      assert.equal(pool.liveWorkers(), 0);
      const again = await pool.verify(SYSTEM_SCOPE, { chainId: org.id, fromSeq: 1, toSeq: null, previous: null });
      assert.equal(again.checked, ROWS);
      assert.equal(pool.liveWorkers(), 1);

      // A range that fails retires its worker; the next range gets a fresh one.
      await assert.rejects(pool.verify(SYSTEM_SCOPE, { chainId: 'not-a-uuid', fromSeq: 1, toSeq: null, previous: null }), /chain verification failed/);
      assert.equal(pool.liveWorkers(), 0);
      assert.equal((await pool.verify(SYSTEM_SCOPE, { chainId: org.id, fromSeq: 1, toSeq: 10, previous: null })).checked, 10);
    } finally {
      await pool.close();
      await close();
    }
  });

  it('counts a chain’s row versions on its workers, a share of the spans each, as one count over them all would', async () => {
    const { t, org, close } = await chainOf(ROWS);
    const pool = createVerifyPool({ connection: t.db.connection!, size: 2, idleMs: 1000 });
    try {
      const shares = await Promise.all([pool.versions(SYSTEM_SCOPE, org.id, [[-1, 1000], [1000, 2000]]), pool.versions(SYSTEM_SCOPE, org.id, [[2000, ROWS]])]);
      const whole = await countVersions(t.db, SYSTEM_SCOPE, org.id, [[-1, ROWS]]);
      assert.equal(whole.rows, 2 * ROWS, 'each row is a seal and its entry');
      assert.deepEqual({ rows: shares[0].rows + shares[1].rows, xminSum: String(BigInt(shares[0].xminSum) + BigInt(shares[1].xminSum)) }, whole);
    } finally {
      await pool.close();
      await close();
    }
  });

  it('reports a database it cannot reach as an error, never as a result', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = '/dms_no_such_database';
    const pool = createVerifyPool({ connection: { url: url.toString(), appRole: 'dms_app' }, size: 1, idleMs: 1000 });
    try {
      await assert.rejects(pool.verify(SYSTEM_SCOPE, { chainId: '00000000-0000-0000-0000-000000000000', fromSeq: 1, toSeq: null, previous: null }), /chain verification failed/);
      assert.equal(pool.liveWorkers(), 0);
    } finally {
      await pool.close();
    }
  });

  it('fails what is queued or running when it closes, and refuses new work', async () => {
    const { t, org, close } = await chainOf(ROWS);
    const pool = createVerifyPool({ connection: t.db.connection!, size: 1, idleMs: 1000 });
    try {
      const job = { chainId: org.id, fromSeq: 1, toSeq: null, previous: null };
      const outcomes = Promise.allSettled([pool.verify(SYSTEM_SCOPE, job), pool.verify(SYSTEM_SCOPE, job)]); // running, queued
      await pool.close();
      for (const outcome of await outcomes) {
        assert.equal(outcome.status, 'rejected');
        assert.match(String((outcome as PromiseRejectedResult).reason), /closed/);
      }
      await assert.rejects(pool.verify(SYSTEM_SCOPE, job), /closed/);
      assert.equal(pool.liveWorkers(), 0);
    } finally {
      await close();
    }
  });
});

describe('the verification pool without a database', () => {
  const orgId = '00000000-0000-4000-8000-000000000001';
  const fields = (n: number) => ({
    orgId, timestamp: '2026-01-02T03:04:05.678Z', actorType: 'system', actorId: null, actorEmail: null, action: 'site.update',
    resourceType: 'site', resourceId: null, resourceName: `site-${n}`, details: { n }, ipAddress: null, userAgent: null, result: 'success', errorMessage: null,
  });
  const rows: ChainLinkRow[] = sealRows({ seq: 0, checksum: null }, Array.from({ length: 50 }, (_, i) => fields(i))).map((link, i) => {
    const f = fields(i);
    return [link.seq, f.timestamp, f.actorType, f.actorId, f.actorEmail, f.action, f.resourceType, f.resourceId, f.resourceName, f.details,
      f.ipAddress, f.userAgent, f.result, f.errorMessage, link.prevChecksum, link.checksum];
  });

  it('hashes the batches it is sent, from any link, and reports the first break', async () => {
    const pool = createVerifyPool({ connection: null, size: 2, idleMs: 1000 });
    try {
      const [whole, tail] = await Promise.all([pool.check(orgId, null, rows), pool.check(orgId, { seq: 20, checksum: rows[19]![15] }, rows.slice(20))]);
      assert.deepEqual(whole, { checked: 50, firstSeq: 1, last: { seq: 50, checksum: rows[49]![15] }, broken: null });
      assert.deepEqual([tail.checked, tail.firstSeq, tail.broken], [30, 21, null]);

      const forged = rows.map((row) => [...row] as ChainLinkRow);
      forged[30]![8] = 'forged';
      const broken = await pool.check(orgId, null, forged);
      assert.deepEqual(broken, { checked: 30, firstSeq: 1, last: { seq: 30, checksum: rows[29]![15] }, broken: { seq: 31, reason: 'checksum_mismatch' } });
      await assert.rejects(pool.verify(SYSTEM_SCOPE, { chainId: orgId, fromSeq: 1, toSeq: null, previous: null }), /no database connection/);
    } finally {
      await pool.close();
    }
  });
});
