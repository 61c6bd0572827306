// /orgs/sites through HTTP: the site access check with SPEC's two messages, 404 for what does not
// exist, timezones, lists by organization, sites of deleted organizations, and the audit trail.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { privateTestDatabase, testApp, testRedisUrl, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createSite, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';

const NOBODY = '00000000-0000-4000-8000-000000000000';

describe('sites', () => {
  let t: TestApp;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let foreign: TestOrg;
  const s: Record<string, Session> = {};
  const call = (who: string) => as(t.app, s[who]!);

  before(async () => {
    t = await testApp();
    const partner = await createPartner(t.db);
    orgA = await createOrg(t.db, partner.id);
    orgB = await createOrg(t.db, partner.id);
    foreign = await createOrg(t.db, (await createPartner(t.db)).id);
    const users = {
      system: await createUser(t.db, { scope: 'system' }),
      partnerAll: await createUser(t.db, { scope: 'partner', partnerId: partner.id }),
      partnerNone: await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'none' }),
      orgAdminA: await createUser(t.db, { scope: 'organization', orgId: orgA.id }),
      orgReadonlyA: await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' }),
    };
    for (const [k, user] of Object.entries(users)) s[k] = await login(t.app, user);
  });
  after(() => t.close());

  it('creates sites only in reachable organizations, with SPEC’s message otherwise', async () => {
    const site = await call('orgAdminA')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: orgA.id, name: 'HQ', address: { city: 'Bern' } } });
    assert.equal(site.statusCode, 201, site.body);
    assert.deepEqual({ orgId: site.json().orgId, timezone: site.json().timezone, address: site.json().address }, { orgId: orgA.id, timezone: 'UTC', address: { city: 'Bern' } });
    const denied = assertProblem(await call('orgAdminA')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: orgB.id, name: 'X' } }), 403, 'ORG_ACCESS_DENIED');
    assert.equal(denied.detail, 'Access to this organization denied');
    assertProblem(await call('partnerAll')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: foreign.id, name: 'X' } }), 403, 'ORG_ACCESS_DENIED');
    assertProblem(await call('partnerAll')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: NOBODY, name: 'X' } }), 403, 'ORG_ACCESS_DENIED');
    assertProblem(await call('system')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: NOBODY, name: 'X' } }), 404, 'NOT_FOUND');
    assertProblem(await call('orgReadonlyA')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: orgA.id, name: 'X' } }), 403, 'PERMISSION_DENIED');
    for (const payload of [{ orgId: orgA.id, name: 'X', timezone: 'Atlantis/Capital' }, { orgId: orgA.id, name: 'x'.repeat(256) }, { orgId: orgA.id }, { orgId: 'nope', name: 'X' }, { orgId: orgA.id, name: 'X', extra: 1 }]) {
      assertProblem(await call('orgAdminA')({ method: 'POST', url: '/api/v1/orgs/sites', payload }), 400, 'VALIDATION_FAILED');
    }
    const zoned = await call('partnerAll')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: orgB.id, name: 'NYC', timezone: 'America/New_York' } });
    assert.equal(zoned.json().timezone, 'America/New_York');
  });

  it('checks site access on read, update and delete: 403 when out of reach, 404 when missing', async () => {
    const theirs = await createSite(t.db, orgB.id);
    for (const [method, payload] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
      const res = await call('orgAdminA')({ method, url: `/api/v1/orgs/sites/${theirs.id}`, ...(payload ? { payload } : {}) });
      assert.equal(assertProblem(res, 403, 'SITE_ACCESS_DENIED').detail, 'Access to this site denied');
      assertProblem(await call('orgAdminA')({ method, url: `/api/v1/orgs/sites/${NOBODY}`, ...(payload ? { payload } : {}) }), 404, 'NOT_FOUND');
    }
    const mine = await createSite(t.db, orgA.id);
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/orgs/sites/${mine.id}`, payload: {} }), 400, 'EMPTY_UPDATE');
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/orgs/sites/${mine.id}` }), 400, 'EMPTY_UPDATE');
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/orgs/sites/${mine.id}`, payload: { orgId: orgB.id } }), 400, 'VALIDATION_FAILED');
    // No recognised field (API.md §2) is EMPTY_UPDATE; a recognised one beside an unknown one is a validation failure.
    const unknownOnly = assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/orgs/sites/${mine.id}`, payload: { colour: 'red' } }), 400, 'EMPTY_UPDATE');
    assert.match(String(unknownOnly.detail), /at least one of name, /);
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/orgs/sites/${mine.id}`, payload: { name: 'x', colour: 'red' } }), 400, 'VALIDATION_FAILED');
    const patched = await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/orgs/sites/${mine.id}`, payload: { name: 'Renamed', timezone: 'Europe/Berlin' } });
    assert.deepEqual({ name: patched.json().name, timezone: patched.json().timezone, orgId: patched.json().orgId }, { name: 'Renamed', timezone: 'Europe/Berlin', orgId: orgA.id });
    assert.deepEqual((await call('orgAdminA')({ method: 'DELETE', url: `/api/v1/orgs/sites/${mine.id}` })).json(), { success: true });
    assertProblem(await call('orgAdminA')({ method: 'GET', url: `/api/v1/orgs/sites/${mine.id}` }), 404, 'NOT_FOUND');

    await t.app.auditSealer.sealNow();
    const trail = (await call('orgAdminA')({ method: 'GET', url: `/api/v1/audit-logs/logs?resource=site&limit=100` })).json().data as { action: string; resourceId: string; details: Record<string, unknown> }[];
    const forSite = trail.filter((e) => e.resourceId === mine.id).map((e) => e.action).sort();
    assert.deepEqual(forSite, ['site.delete', 'site.update']);
    assert.deepEqual((trail.find((e) => e.action === 'site.update' && e.resourceId === mine.id)!.details.changedFields as string[]).sort(), ['name', 'timezone']);
  });

  it('lists the sites each caller reaches, by orgId or organizationId', async () => {
    const siteA = await createSite(t.db, orgA.id);
    const siteB = await createSite(t.db, orgB.id);
    const siteForeign = await createSite(t.db, foreign.id);
    const ids = async (who: string, query = '') => ((await call(who)({ method: 'GET', url: `/api/v1/orgs/sites?limit=100${query}` })).json().data as { id: string }[]).map((x) => x.id);
    const aSees = await ids('orgAdminA');
    assert.ok(aSees.includes(siteA.id) && !aSees.includes(siteB.id) && !aSees.includes(siteForeign.id));
    const partnerSees = await ids('partnerAll');
    assert.ok(partnerSees.includes(siteA.id) && partnerSees.includes(siteB.id) && !partnerSees.includes(siteForeign.id));
    assert.deepEqual(await ids('partnerAll', `&orgId=${orgB.id}`), (await ids('partnerAll', `&organizationId=${orgB.id}`)));
    assert.ok((await ids('partnerAll', `&orgId=${orgB.id}`)).includes(siteB.id));
    assert.deepEqual(await ids('orgAdminA', `&orgId=${orgB.id}`), []);
    assert.deepEqual(await ids('partnerNone'), []);
    assertProblem(await call('partnerAll')({ method: 'GET', url: '/api/v1/orgs/sites?orgId=nope' }), 400, 'VALIDATION_FAILED');
  });

  it('keeps the sites of a deleted organization but makes them unreachable', async () => {
    const org = (await call('partnerAll')({ method: 'POST', url: '/api/v1/orgs/organizations', payload: { name: 'Short-lived', slug: `short-${Date.now()}` } })).json();
    const site = (await call('partnerAll')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: org.id, name: 'Orphan' } })).json();
    await call('partnerAll')({ method: 'DELETE', url: `/api/v1/orgs/organizations/${org.id}` });
    assertProblem(await call('partnerAll')({ method: 'GET', url: `/api/v1/orgs/sites/${site.id}` }), 404, 'NOT_FOUND');
    assert.ok(!((await call('system')({ method: 'GET', url: '/api/v1/orgs/sites?limit=100' })).json().data as { id: string }[]).some((x) => x.id === site.id));
    // Named by a system caller, whose reach has no list of live organizations to leave it out of.
    for (const query of [`orgId=${org.id}`, `organizationId=${org.id}`, `orgId=${org.id}&search=orph`]) {
      const listed = (await call('system')({ method: 'GET', url: `/api/v1/orgs/sites?${query}` })).json();
      assert.deepEqual([listed.data, listed.pagination.total], [[], 0], query);
    }
  });
});

describe('site list totals', () => {
  // A database of its own: the system-scope total counts every tenant's sites, which other test
  // files running at the same time would change.
  let t: TestApp;
  let drop: () => Promise<void>;
  before(async () => {
    const own = await privateTestDatabase();
    drop = own.drop;
    t = await testApp({ db: own.db });
  });
  after(async () => {
    await t.close();
    await drop();
  });

  it('counts exactly under concurrent creates and deletes, and leaves out deleted organizations', async () => {
    const partner = await createPartner(t.db);
    const [orgA, orgB] = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
    const partnerUser = as(t.app, await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id })));
    const system = as(t.app, await login(t.app, await createUser(t.db, { scope: 'system' })));
    const totalOf = async (caller: typeof system, query: string) => {
      const res = await caller({ method: 'GET', url: `/api/v1/orgs/sites?limit=1${query}` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().pagination.total as number;
    };
    const systemBefore = await totalOf(system, '');

    const created = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      partnerUser({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: i % 3 === 0 ? orgB.id : orgA.id, name: `Site ${i}` } })));
    assert.deepEqual(created.map((r) => r.statusCode), Array(24).fill(201));
    const inA = created.filter((r) => r.json().orgId === orgA.id);
    await Promise.all(inA.slice(0, 5).map((r) => partnerUser({ method: 'DELETE', url: `/api/v1/orgs/sites/${r.json().id}` })));

    assert.equal(await totalOf(partnerUser, `&orgId=${orgA.id}`), 16 - 5);
    assert.equal(await totalOf(partnerUser, `&orgId=${orgB.id}`), 8);
    assert.equal(await totalOf(partnerUser, ''), 19);
    assert.equal(await totalOf(system, ''), systemBefore + 19);

    assert.equal((await system({ method: 'DELETE', url: `/api/v1/orgs/organizations/${orgB.id}` })).statusCode, 200);
    assert.equal(await totalOf(partnerUser, ''), 11, 'sites of a deleted organization are out of reach');
    assert.equal(await totalOf(system, ''), systemBefore + 11);
  });
});

// Site list pages are cached per reach: every change must show on the next list, on this instance
// at once and on another instance as soon as the invalidation message arrives.
const redisUrl = await testRedisUrl();

describe('site list cache', () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await testApp({ env: redisUrl ? { REDIS_URL: redisUrl } : {} });
    b = await testApp({ env: redisUrl ? { REDIS_URL: redisUrl } : {}, db: a.db });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  const names = async (app: TestApp, caller: ReturnType<typeof as>, orgId: string) => {
    const res = await caller({ method: 'GET', url: `/api/v1/orgs/sites?orgId=${orgId}` });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as { name: string }[]).map((site) => site.name).sort();
  };

  it('shows every create, rename and delete on the next list of the same instance', async () => {
    const org = await createOrg(a.db, (await createPartner(a.db)).id);
    const admin = as(a.app, await login(a.app, await createUser(a.db, { scope: 'organization', orgId: org.id })));
    assert.deepEqual(await names(a, admin, org.id), []);
    const created = await admin({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: org.id, name: 'Depot' } });
    assert.deepEqual(await names(a, admin, org.id), ['Depot']);
    await admin({ method: 'PATCH', url: `/api/v1/orgs/sites/${created.json().id}`, payload: { name: 'Depot North' } });
    assert.deepEqual(await names(a, admin, org.id), ['Depot North']);
    await admin({ method: 'DELETE', url: `/api/v1/orgs/sites/${created.json().id}` });
    assert.deepEqual(await names(a, admin, org.id), []);
  });

  it('shows a change made on another instance', { skip: redisUrl ? false : 'Redis is not reachable' }, async () => {
    const org = await createOrg(a.db, (await createPartner(a.db)).id);
    const user = await createUser(a.db, { scope: 'organization', orgId: org.id });
    const onA = as(a.app, await login(a.app, user));
    const onB = as(b.app, await login(b.app, user));
    assert.deepEqual(await names(b, onB, org.id), []);
    await onA({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: org.id, name: 'Annex' } });
    const deadline = Date.now() + 2000;
    let seen = await names(b, onB, org.id);
    while (seen.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen = await names(b, onB, org.id);
    }
    assert.deepEqual(seen, ['Annex']);
  });
});
