// The security-events and compliance reports through HTTP: exact counts over every row of the
// range (bounds inclusive), the shapes by action, result, actor and UTC day, defaults, bad input,
// scope and API keys.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { createAuditRecorder, type AuditAction, type AuditResult } from './recorder.js';

interface Seed { at: string; action: AuditAction; result?: AuditResult; actor?: { id: string; email: string } }

/** Writes audit rows at given times through the recorder, in one transaction, then seals them. */
async function seed(t: TestApp, orgId: string | null, rows: Seed[]): Promise<void> {
  let at = 0;
  const record = createAuditRecorder({ now: () => at, onRecorded: () => {} });
  await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
    for (const row of rows) {
      at = Date.parse(row.at);
      await record(tx, {
        orgId,
        actor: row.actor ? { type: 'user', id: row.actor.id, email: row.actor.email } : { type: 'system', id: null },
        action: row.action,
        result: row.result ?? 'success',
      });
    }
  });
  await t.app.auditSealer.sealNow();
}

for (const backend of backends()) {
  describe(`audit reports on ${backend}`, () => {
    let t: TestApp;
    let orgA: TestOrg;
    let orgB: TestOrg;
    let sessionA: Session;
    let system: Session;
    const alice = { id: randomUUID(), email: 'alice@example.test' };
    const bob = { id: randomUUID(), email: 'bob@example.test' };
    const range = 'from=2025-03-01T00:00:00.000Z&to=2025-03-03T23:59:59.999Z';
    const get = (session: Session, url: string) => as(t.app, session)({ method: 'GET', url });

    before(async () => {
      t = await testApp({ backend });
      const partner = await createPartner(t.db);
      orgA = await createOrg(t.db, partner.id);
      orgB = await createOrg(t.db, partner.id);
      sessionA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id }));
      system = await login(t.app, await createUser(t.db, { scope: 'system' }));
      await seed(t, orgA.id, [
        { at: '2025-02-28T23:59:59.999Z', action: 'user.login', actor: alice }, // just before the range
        { at: '2025-03-01T00:00:00.000Z', action: 'user.login', actor: alice }, // first instant
        { at: '2025-03-01T10:00:00.000Z', action: 'user.login.failed', result: 'failure', actor: bob },
        { at: '2025-03-01T10:00:01.000Z', action: 'user.login.failed', result: 'failure', actor: bob },
        { at: '2025-03-02T12:00:00.000Z', action: 'policy.update', actor: alice }, // in both lists
        { at: '2025-03-02T12:30:00.000Z', action: 'user.permission.change', result: 'denied', actor: bob },
        { at: '2025-03-02T13:00:00.000Z', action: 'data.export', actor: alice },
        { at: '2025-03-02T14:00:00.000Z', action: 'site.create', actor: alice }, // in neither list
        // Exact actions only; a stored action outside the catalogue (another writer's) is not counted.
        { at: '2025-03-02T15:00:00.000Z', action: 'user.login.failedx' as AuditAction, actor: alice },
        { at: '2025-03-03T23:59:59.999Z', action: 'agent.source.ip.changed' }, // last instant, no actor
        { at: '2025-03-04T00:00:00.000Z', action: 'user.login', actor: alice }, // just after
        { at: '2025-03-03T08:00:00.000Z', action: 'script.execute', result: 'failure' },
      ]);
      await seed(t, orgB.id, [{ at: '2025-03-02T00:00:00.000Z', action: 'user.login', actor: bob }]);
    });
    after(() => t.close());

    it('counts security events over the range by action, result, actor and UTC day', async () => {
      const res = await get(sessionA, `/api/v1/audit-logs/reports/security-events?${range}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {
        from: '2025-03-01T00:00:00.000Z',
        to: '2025-03-03T23:59:59.999Z',
        total: 6,
        byAction: [
          { action: 'user.login.failed', count: 2 },
          { action: 'agent.source.ip.changed', count: 1 },
          { action: 'policy.update', count: 1 },
          { action: 'user.login', count: 1 },
          { action: 'user.permission.change', count: 1 },
        ],
        byResult: { success: 3, failure: 2, denied: 1 },
        byActor: [
          { actorId: bob.id, actorEmail: bob.email, count: 3 },
          { actorId: alice.id, actorEmail: alice.email, count: 2 },
          { actorId: null, actorEmail: null, count: 1 },
        ],
        byDay: [{ day: '2025-03-01', count: 3 }, { day: '2025-03-02', count: 2 }, { day: '2025-03-03', count: 1 }],
      });
    });

    it('counts compliance-tracked actions', async () => {
      const res = await get(sessionA, `/api/v1/audit-logs/reports/compliance?${range}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.total, 3);
      assert.deepEqual(body.byAction, [
        { action: 'data.export', count: 1 }, { action: 'policy.update', count: 1 }, { action: 'script.execute', count: 1 },
      ]);
      assert.deepEqual(body.byResult, { success: 2, failure: 1, denied: 0 });
      assert.deepEqual(body.byActor, [{ actorId: alice.id, actorEmail: alice.email, count: 2 }, { actorId: null, actorEmail: null, count: 1 }]);
      assert.deepEqual(body.byDay, [{ day: '2025-03-02', count: 2 }, { day: '2025-03-03', count: 1 }]);
    });

    it('counts every row of a large range, not a page or a sample', async () => {
      const partner = await createPartner(t.db);
      const busy = await createOrg(t.db, partner.id);
      await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(
        `insert into audit_logs (id, org_id, timestamp, actor_type, actor_id, actor_email, action, result)
         select gen_random_uuid(), $1::uuid, timestamptz '2024-06-01T00:00:00Z' + make_interval(mins => i), 'user', $2::uuid, $3::text,
                case when i % 3 = 0 then 'user.login.failed' else 'user.login' end,
                case when i % 3 = 0 then 'failure' else 'success' end
           from generate_series(0, 1499) as i`,
        [busy.id, alice.id, alice.email],
      ));
      await t.app.auditSealer.sealNow();
      const res = await get(system, `/api/v1/audit-logs/reports/security-events?orgId=${busy.id}&from=2024-06-01T00:00:00Z&to=2024-06-30T00:00:00Z`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.total, 1500);
      assert.deepEqual(body.byResult, { success: 1000, failure: 500, denied: 0 });
      assert.deepEqual(body.byAction, [{ action: 'user.login', count: 1000 }, { action: 'user.login.failed', count: 500 }]);
      // 1500 minutes from midnight: a full day and one hour of the next.
      assert.deepEqual(body.byDay, [{ day: '2024-06-01', count: 1440 }, { day: '2024-06-02', count: 60 }]);
    });

    it('defaults to the last 30 days', async () => {
      const now = t.clock.now();
      const day = 24 * 60 * 60 * 1000;
      await seed(t, orgB.id, [
        { at: new Date(now - day).toISOString(), action: 'data.access' },
        { at: new Date(now - 29 * day).toISOString(), action: 'data.access' },
        { at: new Date(now - 31 * day).toISOString(), action: 'data.access' },
      ]);
      const res = await get(system, `/api/v1/audit-logs/reports/compliance?orgId=${orgB.id}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.ok(Math.abs(Date.parse(body.to) - now) < 10_000, `to is now, got ${body.to}`);
      assert.equal(Date.parse(body.to) - Date.parse(body.from), 30 * day);
      assert.deepEqual(body.byAction, [{ action: 'data.access', count: 2 }]);
      // With only `to`: the 30 days before it.
      const earlier = await get(system, `/api/v1/audit-logs/reports/compliance?orgId=${orgB.id}&to=${new Date(now - 30 * day).toISOString()}`);
      assert.deepEqual(earlier.json().byAction, [{ action: 'data.access', count: 1 }]);
    });

    it('refuses a range that ends before it starts, and dates that are not dates', async () => {
      for (const path of ['security-events', 'compliance']) {
        const url = `/api/v1/audit-logs/reports/${path}`;
        assertProblem(await get(sessionA, `${url}?from=2025-03-02T00:00:00Z&to=2025-03-01T00:00:00Z`), 400, 'VALIDATION_FAILED');
        assertProblem(await get(sessionA, `${url}?from=yesterday`), 400, 'VALIDATION_FAILED');
        assertProblem(await get(sessionA, `${url}?to=2025-13-45T00:00:00Z`), 400, 'VALIDATION_FAILED');
        assertProblem(await get(sessionA, `${url}?orgId=nope`), 400, 'VALIDATION_FAILED');
      }
      // A range of one instant is fine.
      const one = await get(sessionA, `/api/v1/audit-logs/reports/security-events?from=2025-03-01T00:00:00.000Z&to=2025-03-01T00:00:00.000Z`);
      assert.equal(one.json().total, 1);
    });

    it('reports only what the caller may read', async () => {
      const url = '/api/v1/audit-logs/reports/security-events';
      // Org scope: its own organization; another organization or the platform chain → empty.
      for (const query of [`orgId=${orgB.id}`, 'orgId=platform']) {
        const body = (await get(sessionA, `${url}?${range}&${query}`)).json();
        assert.deepEqual(body, {
          from: '2025-03-01T00:00:00.000Z', to: '2025-03-03T23:59:59.999Z', total: 0, byAction: [],
          byResult: { success: 0, failure: 0, denied: 0 }, byActor: [], byDay: [],
        });
      }
      // Partner scope with organization B only.
      const partner = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: orgA.partnerId, orgAccess: 'selected', orgIds: [orgB.id] }));
      assert.deepEqual((await get(partner, `${url}?${range}`)).json().byActor, [{ actorId: bob.id, actorEmail: bob.email, count: 1 }]);
      assert.equal((await get(partner, `${url}?${range}&orgId=${orgA.id}`)).json().total, 0);
      // System scope: every chain, or one of them.
      assert.ok((await get(system, `${url}?${range}`)).json().total >= 7);
      assert.equal((await get(system, `${url}?${range}&orgId=${orgA.id}`)).json().total, 6);
      await seed(t, null, [{ at: '2025-03-02T00:00:00.000Z', action: 'user.login.failed', result: 'failure' }]);
      const platform = (await get(system, `${url}?${range}&orgId=platform`)).json();
      assert.ok(platform.byAction.some((a: { action: string }) => a.action === 'user.login.failed'));
    });

    it('admits an API key with audit:read and refuses one without', async () => {
      const reader = await createApiKey(t.db, orgA.id, { scopes: ['audit:read'] });
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/audit-logs/reports/compliance?${range}`, headers: { 'x-api-key': reader.key } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().total, 3);
      const other = await createApiKey(t.db, orgA.id, { scopes: ['audit:export'] });
      assertProblem(
        await t.app.inject({ method: 'GET', url: `/api/v1/audit-logs/reports/security-events?${range}`, headers: { 'x-api-key': other.key } }),
        403,
        'API_KEY_SCOPE_DENIED',
      );
    });
  });
}
