// /verify under load and repetition, on both backends: the event loop stays free while many
// callers verify chains, at most two verifications run at once and one per chain (the rest get
// 429 with Retry-After), a repeated call on an unchanged chain is answered from the last result,
// and any sealed row, retention run or change behind the service's back is verified afresh.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { asOwner, backends, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { createAuditRecorder } from './recorder.js';
import { verifyCounters } from './verify-cache.js';

// Enough that hashing a chain on the event loop shows: PostgreSQL reads off the event loop, so
// only the hashing would stall it there; PGlite also reads on it.
const CHAIN_ROWS = { postgres: 10_000, pglite: 3_000 } as const;
const DAY = 86_400_000;
// Generous for a 2-core machine running the rest of the suite beside it (max up to ~280 ms seen
// there). Hashing on the event loop, 20 calls at once held /healthz for 1-4 s on PGlite (the max
// catches it) and for a median of 50-85 ms on PostgreSQL (the median catches it).
const HEALTHZ_MAX_MS = 1000;
const HEALTHZ_MEDIAN_MS = 40;

type Verification = { valid: boolean; checked: number; firstSeq: number | null; lastSeq: number | null; brokenAt: { seq: number; reason: string } | null };
const outcome = (v: Verification) => [v.valid, v.brokenAt?.seq ?? null, v.brokenAt?.reason ?? null, v.checked];

for (const backend of backends()) {
  describe(`/verify under load on ${backend}`, () => {
    const ROWS = CHAIN_ROWS[backend];
    let t: TestApp;
    let partnerId: string;
    let system: Session;
    const chains: TestOrg[] = [];

    const record = (orgId: string, at: number, count: number) => {
      const recordAudit = createAuditRecorder({ now: () => at, onRecorded: () => {} });
      return withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
        for (let i = 0; i < count; i++) await recordAudit(tx, { orgId, actor: { type: 'system', id: null }, action: 'site.update', details: { i } });
      });
    };
    const call = (org: TestOrg, query = '') => as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/verify?orgId=${org.id}${query}` });
    const verify = async (org: TestOrg, query = ''): Promise<Verification> => {
      const res = await call(org, query);
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const newOrg = (rows: number) => createOrg(t.db, partnerId).then(async (org) => {
      await record(org.id, t.clock.now(), rows);
      await t.app.auditSealer.sealNow();
      return org;
    });

    before(async () => {
      t = await testApp({ backend });
      partnerId = (await createPartner(t.db)).id;
      system = await login(t.app, await createUser(t.db, { scope: 'system' }));
      for (let i = 0; i < 2; i++) {
        const org = await createOrg(t.db, partnerId);
        await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(
          `insert into audit_entries (id, org_id, timestamp, actor_type, action, resource_type, resource_name, details, result)
           select gen_random_uuid(), $1, date_trunc('milliseconds', now()), 'system', 'device.update', 'device', 'host-' || g,
                  jsonb_build_object('n', g, 'changedFields', jsonb_build_array('name', 'siteId')), 'success'
             from generate_series(1, $2::int) g`,
          [org.id, ROWS],
        ));
        chains.push(org);
      }
      await t.app.auditSealer.sealNow();
    });
    after(() => t.close());

    it('answers /healthz promptly while 20 callers verify two chains, two at a time, the rest told when to retry', async () => {
      await Promise.all(chains.map((org) => verify(org))); // starts both warm worker threads
      verifyCounters.peakRuns = 0;
      const refused = verifyCounters.refused;
      let done = false;
      // Distinct ranges, so no call shares another's run or result: each is a verification of its own.
      const callers = Array.from({ length: 20 }, async (_, i) => {
        for (;;) {
          const res = await call(chains[i % 2]!, `&toSeq=${ROWS - i}`);
          if (res.statusCode !== 429) return res;
          assertProblem(res, 429, 'RATE_LIMITED');
          assert.equal(res.headers['retry-after'], '1');
          await sleep(1000 * (0.5 + Math.random())); // as told, with jitter
        }
      });
      const all = Promise.all(callers).finally(() => {
        done = true;
      });
      // Timed from when each probe was due, so a stalled event loop counts even while it delays the probe.
      const latencies: number[] = [];
      for (let due = performance.now(); !done; due = Math.max(due + 50, performance.now())) {
        await sleep(Math.max(0, due - performance.now()));
        const health = await t.app.inject({ method: 'GET', url: '/healthz' });
        assert.equal(health.statusCode, 200);
        latencies.push(performance.now() - due);
      }
      (await all).forEach((res, i) => {
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual([res.json().valid, res.json().checked], [true, ROWS - i]);
      });
      assert.ok(verifyCounters.peakRuns <= 2, `at most two verifications at once, saw ${verifyCounters.peakRuns}`);
      assert.ok(verifyCounters.refused > refused, 'callers beyond two were refused');
      const sorted = [...latencies].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const max = sorted[sorted.length - 1]!;
      console.log(`# ${backend}: /healthz during 20 verifications: ${latencies.length} probes, median ${median.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
      assert.ok(latencies.length >= 10, `probed throughout (${latencies.length} probes)`);
      assert.ok(max < HEALTHZ_MAX_MS, `/healthz took up to ${max.toFixed(0)} ms while chains were verified`);
      assert.ok(median < HEALTHZ_MEDIAN_MS, `/healthz took ${median.toFixed(0)} ms in the median while chains were verified`);
    });

    it('runs one range per chain and two in all at once, refusing the rest before they read anything', async () => {
      const third = await newOrg(3);
      verifyCounters.peakRuns = 0;
      const [a, b, c, d] = await Promise.all([
        call(chains[0]!, `&toSeq=${ROWS - 100}`),
        call(chains[0]!, `&toSeq=${ROWS - 101}`),
        call(chains[1]!, `&toSeq=${ROWS - 100}`),
        call(third, '&toSeq=2'),
      ]);
      assert.deepEqual([a, b, c, d].map((res) => res.statusCode).sort(), [200, 200, 429, 429]);
      assert.ok(a!.statusCode === 429 || b!.statusCode === 429, 'one range of the first chain at a time');
      for (const res of [a, b, c, d]) if (res!.statusCode === 429) assert.equal(res!.headers['retry-after'], '1');
      assert.equal(verifyCounters.peakRuns, 2);
    });

    it('shares one run among concurrent callers of the same range', async () => {
      const runs = verifyCounters.runs;
      const answers = await Promise.all(Array.from({ length: 6 }, () => verify(chains[0]!, '&fromSeq=2')));
      for (const answer of answers) assert.deepEqual(answer, answers[0]);
      assert.deepEqual([answers[0]!.valid, answers[0]!.checked], [true, ROWS - 1]);
      assert.equal(verifyCounters.runs - runs, 1);
    });

    it('answers a repeated call on an unchanged chain from the last result, and a sealed row afresh', async () => {
      const [org] = chains;
      const first = await verify(org!);
      const { runs, rows } = verifyCounters;
      assert.deepEqual(await verify(org!), first);
      assert.deepEqual([verifyCounters.runs, verifyCounters.rows], [runs, rows], 'no row read again');

      await record(org!.id, t.clock.now(), 1);
      await t.app.auditSealer.sealNow();
      const grown = await verify(org!);
      assert.deepEqual([grown.valid, grown.checked, grown.lastSeq], [true, first.checked + 1, first.lastSeq! + 1]);
      assert.deepEqual([verifyCounters.runs, verifyCounters.rows], [runs + 1, rows + grown.checked]);
    });

    it('verifies afresh after a change behind the service’s back, though the chain’s head did not move', async () => {
      const org = await newOrg(6);
      // An entry's content lives in audit_entries, its place in the chain in audit_seals.
      const tamper = (table: 'audit_entries' | 'audit_seals', set: string, seq: number) =>
        asOwner(t.db, (tx) => tx.query(
          `update ${table} set ${set} where pending_order = (select pending_order from audit_seals where chain_id = $1 and seq = $2)`, [org.id, seq],
        ), { replica: true });
      assert.deepEqual(outcome(await verify(org)), [true, null, null, 6]);
      assert.deepEqual(outcome(await verify(org, '&fromSeq=5')), [true, null, null, 2]);

      await tamper('audit_entries', `details = '{"i": -1}'`, 3);
      assert.deepEqual(outcome(await verify(org)), [false, 3, 'checksum_mismatch', 2]);
      // A range that does not read row 3 keeps its answer; one that reads row 4 (for its checksum) does not.
      const runs = verifyCounters.runs;
      assert.deepEqual(outcome(await verify(org, '&fromSeq=5')), [true, null, null, 2]);
      assert.equal(verifyCounters.runs, runs);
      await tamper('audit_seals', `checksum = repeat('0', 64)`, 4);
      assert.deepEqual(outcome(await verify(org, '&fromSeq=5')), [false, 5, 'prev_checksum_mismatch', 0]);
    });

    it('verifies afresh after a retention run moves the anchor', async () => {
      const org = await newOrg(0);
      await record(org.id, t.clock.now() - 400 * DAY, 6);
      await record(org.id, t.clock.now(), 3);
      await t.app.auditSealer.sealNow();
      assert.deepEqual([(await verify(org)).checked, (await verify(org)).checked], [9, 9]);
      const [result] = await t.app.auditRetention.runOnce({ orgId: org.id });
      assert.equal(result!.deleted, 6);
      const trimmed = await verify(org);
      assert.deepEqual([trimmed.valid, trimmed.checked, trimmed.firstSeq], [true, 3, 7]);
    });
  });
}
