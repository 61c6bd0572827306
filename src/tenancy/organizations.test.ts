// /orgs/ and /orgs/organizations through HTTP: the partnerId rules and messages, caps under
// concurrency, slug uniqueness per partner, 404 for what a partner cannot see, order, and audit.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg, type TestPartner } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';

const slug = () => `org-${randomBytes(4).toString('hex')}`;

describe('organizations', () => {
  let t: TestApp;
  let partner: TestPartner;
  let other: TestPartner;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let foreign: TestOrg;
  const s: Record<string, Session> = {};
  const call = (who: string) => as(t.app, s[who]!);
  const create = (who: string, payload: Record<string, unknown>) => call(who)({ method: 'POST', url: '/api/v1/orgs/organizations', payload });

  before(async () => {
    t = await testApp();
    partner = await createPartner(t.db);
    other = await createPartner(t.db);
    orgA = await createOrg(t.db, partner.id);
    orgB = await createOrg(t.db, partner.id);
    foreign = await createOrg(t.db, other.id);
    const users = {
      system: await createUser(t.db, { scope: 'system' }),
      partnerAll: await createUser(t.db, { scope: 'partner', partnerId: partner.id }),
      partnerSelected: await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'selected', orgIds: [orgA.id] }),
      partnerNone: await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'none' }),
      orgAdmin: await createUser(t.db, { scope: 'organization', orgId: orgA.id }),
      otherPartner: await createUser(t.db, { scope: 'partner', partnerId: other.id }),
    };
    for (const [k, user] of Object.entries(users)) s[k] = await login(t.app, user);
  });
  after(() => t.close());

  it('creates organizations under the partnerId rules, with SPEC’s messages', async () => {
    const mine = await create('partnerAll', { name: 'Contoso', slug: slug() });
    assert.equal(mine.statusCode, 201, mine.body);
    assert.deepEqual({ partnerId: mine.json().partnerId, status: mine.json().status, type: mine.json().type }, { partnerId: partner.id, status: 'active', type: 'customer' });
    assertProblem(await create('partnerAll', { partnerId: other.id, name: 'X', slug: slug() }), 403, 'PARTNER_MISMATCH');
    const noPartner = assertProblem(await create('system', { name: 'X', slug: slug() }), 400, 'VALIDATION_FAILED');
    assert.equal(noPartner.detail, 'partnerId is required for system scope');
    // An explicit null is the same as leaving it out, for both scopes.
    const nullPartner = assertProblem(await create('system', { partnerId: null, name: 'X', slug: slug() }), 400, 'VALIDATION_FAILED');
    assert.equal(nullPartner.detail, 'partnerId is required for system scope');
    assert.equal((await create('partnerAll', { partnerId: null, name: 'Null partner', slug: slug() })).json().partnerId, partner.id);
    assertProblem(await create('system', { partnerId: '00000000-0000-4000-8000-000000000000', name: 'X', slug: slug() }), 404, 'NOT_FOUND');
    assertProblem(await create('orgAdmin', { name: 'X', slug: slug() }), 403, 'PERMISSION_DENIED');
    assertProblem(await create('partnerSelected', { name: 'X', slug: slug() }), 403, 'PERMISSION_DENIED');
    assert.equal((await create('system', { partnerId: other.id, name: 'Fabrikam', slug: slug(), status: 'trial', contractStart: '2026-01-01T00:00:00.000Z' })).statusCode, 201);
    for (const payload of [{ name: 'X', slug: 'Bad Slug' }, { name: 'X'.repeat(256), slug: slug() }, { name: 'X', slug: slug(), type: 'vendor' }, { name: 'X', slug: slug(), bogus: 1 }, { name: 'X', slug: slug(), contractStart: 'soon' }]) {
      assertProblem(await create('partnerAll', payload), 400, 'VALIDATION_FAILED');
    }

    // The new organization is reachable at once, and its creation is in its own chain.
    const id = mine.json().id;
    assert.equal((await call('partnerAll')({ method: 'GET', url: `/api/v1/orgs/organizations/${id}` })).statusCode, 200);
    await t.app.auditSealer.sealNow();
    const [entry] = (await call('partnerAll')({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=${id}` })).json().data;
    assert.equal(entry.action, 'organization.create');
    assert.deepEqual(entry.details, { partnerId: partner.id, status: 'active', type: 'customer' });
  });

  it('enforces maxOrganizations, with exactly the remaining number winning a race', async () => {
    const capped = await createPartner(t.db);
    await call('system')({ method: 'PATCH', url: `/api/v1/orgs/partners/${capped.id}`, payload: { maxOrganizations: 3 } });
    await createOrg(t.db, capped.id);
    const results = await Promise.all(Array.from({ length: 5 }, () => create('system', { partnerId: capped.id, name: 'Race', slug: slug() })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 201, 409, 409, 409]);
    assertProblem(results.find((r) => r.statusCode === 409)!, 409, 'LIMIT_REACHED');
  });

  it('keeps slugs unique within a partner among live organizations', async () => {
    const taken = slug();
    assert.equal((await create('partnerAll', { name: 'One', slug: taken })).statusCode, 201);
    assertProblem(await create('partnerAll', { name: 'Two', slug: taken }), 409, 'CONFLICT');
    assert.equal((await create('otherPartner', { name: 'Elsewhere', slug: taken })).statusCode, 201);
    const raced = await Promise.all([1, 2, 3].map(() => create('system', { partnerId: partner.id, name: 'Race', slug: `${taken}-x` })));
    assert.deepEqual(raced.map((r) => r.statusCode).sort(), [201, 409, 409]);
  });

  it('hides other partners’ organizations behind 404 and refuses partnerId changes', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await call('partnerAll')({ method, url: `/api/v1/orgs/organizations/${foreign.id}`, ...(method === 'PATCH' ? { payload: { name: 'x' } } : {}) });
      assertProblem(res, 404, 'NOT_FOUND');
    }
    assertProblem(await call('partnerSelected')({ method: 'GET', url: `/api/v1/orgs/organizations/${orgB.id}` }), 404, 'NOT_FOUND');
    assertProblem(await call('partnerAll')({ method: 'PATCH', url: `/api/v1/orgs/organizations/${orgA.id}`, payload: { partnerId: other.id } }), 400, 'VALIDATION_FAILED');
    assertProblem(await call('partnerAll')({ method: 'PATCH', url: `/api/v1/orgs/organizations/${orgA.id}`, payload: {} }), 400, 'EMPTY_UPDATE');
    const renamed = await call('partnerAll')({ method: 'PATCH', url: `/api/v1/orgs/organizations/${orgA.id}`, payload: { name: 'Alpha Corp', maxDevices: 50 } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual({ name: renamed.json().name, maxDevices: renamed.json().maxDevices, partnerId: renamed.json().partnerId }, { name: 'Alpha Corp', maxDevices: 50, partnerId: partner.id });
    assertProblem(await call('orgAdmin')({ method: 'GET', url: `/api/v1/orgs/organizations/${orgA.id}` }), 403, 'PERMISSION_DENIED');
  });

  it('lists what each scope reaches; soft-deleted organizations disappear everywhere', async () => {
    const ids = async (who: string, url = '/api/v1/orgs/') => ((await call(who)({ method: 'GET', url })).json().data as { id: string }[]).map((o) => o.id);
    assert.deepEqual(await ids('orgAdmin'), [orgA.id]);
    assert.deepEqual(await ids('partnerSelected'), [orgA.id]);
    assert.deepEqual(await ids('partnerNone'), []);
    assert.ok(!(await ids('partnerAll')).includes(foreign.id));
    assert.ok((await ids('system', `/api/v1/orgs/organizations?partnerId=${other.id}&limit=100`)).includes(foreign.id));
    assert.deepEqual(await ids('partnerAll', `/api/v1/orgs/organizations?partnerId=${other.id}`), []);

    const doomed = (await create('partnerAll', { name: 'Doomed', slug: slug() })).json();
    assert.deepEqual((await call('partnerAll')({ method: 'DELETE', url: `/api/v1/orgs/organizations/${doomed.id}` })).json(), { success: true });
    assertProblem(await call('partnerAll')({ method: 'GET', url: `/api/v1/orgs/organizations/${doomed.id}` }), 404, 'NOT_FOUND');
    assertProblem(await call('system')({ method: 'DELETE', url: `/api/v1/orgs/organizations/${doomed.id}` }), 404, 'NOT_FOUND');
    assert.ok(!(await ids('partnerAll')).includes(doomed.id));
    assert.ok(!(await ids('partnerAll', '/api/v1/orgs/organizations?limit=100')).includes(doomed.id));
  });

  it('stores a cleaned display order that both lists follow', async () => {
    const p = await createPartner(t.db);
    const [o1, o2, o3] = [await createOrg(t.db, p.id), await createOrg(t.db, p.id), await createOrg(t.db, p.id)];
    const gone = await createOrg(t.db, p.id, { deleted: true });
    const admin = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: p.id }));
    const res = await as(t.app, admin)({ method: 'PATCH', url: '/api/v1/orgs/organizations/order', payload: { organizationOrder: [o3!.id, gone.id, foreign.id, o1!.id] } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { organizationOrder: [o3!.id, o1!.id, o2!.id] });
    const order = (url: string, session: Session) => as(t.app, session)({ method: 'GET', url }).then((r) => (r.json().data as { id: string }[]).map((o) => o.id));
    assert.deepEqual(await order('/api/v1/orgs/', admin), [o3!.id, o1!.id, o2!.id]);
    assert.deepEqual(await order('/api/v1/orgs/organizations', admin), [o3!.id, o1!.id, o2!.id]);
    assert.deepEqual(await order(`/api/v1/orgs/organizations?partnerId=${p.id}`, s.system!), [o3!.id, o1!.id, o2!.id]);
    assert.deepEqual((await call('partnerAll')({ method: 'GET', url: `/api/v1/orgs/partners/me` })).json().settings.organizationOrder, undefined);
    assertProblem(await call('system')({ method: 'PATCH', url: '/api/v1/orgs/organizations/order', payload: { organizationOrder: [] } }), 403, 'PERMISSION_DENIED');
    assertProblem(await as(t.app, admin)({ method: 'PATCH', url: '/api/v1/orgs/organizations/order', payload: { organizationOrder: ['nope'] } }), 400, 'VALIDATION_FAILED');
  });

  it('lets a system caller order a partner’s organizations by naming the partner, and no one else name it', async () => {
    const p = await createPartner(t.db);
    const [o1, o2] = [await createOrg(t.db, p.id), await createOrg(t.db, p.id)];
    const reorder = (who: string, payload: Record<string, unknown>) =>
      call(who)({ method: 'PATCH', url: '/api/v1/orgs/organizations/order', payload });
    const res = await reorder('system', { partnerId: p.id, organizationOrder: [o2!.id, foreign.id] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { organizationOrder: [o2!.id, o1!.id] }, 'another partner’s organization is dropped');
    const listed = await call('system')({ method: 'GET', url: `/api/v1/orgs/organizations?partnerId=${p.id}` });
    assert.deepEqual((listed.json().data as { id: string }[]).map((o) => o.id), [o2!.id, o1!.id]);
    assertProblem(await reorder('system', { organizationOrder: [o1!.id] }), 403, 'PERMISSION_DENIED');
    assertProblem(await reorder('system', { partnerId: '00000000-0000-4000-8000-000000000000', organizationOrder: [] }), 404, 'NOT_FOUND');
    assertProblem(await reorder('partnerAll', { partnerId: p.id, organizationOrder: [o1!.id] }), 403, 'PARTNER_MISMATCH');
    assertProblem(await reorder('orgAdmin', { partnerId: p.id, organizationOrder: [o1!.id] }), 403, 'PERMISSION_DENIED');
  });

  it('lets a partner user reaching some organizations reorder only those, keeping every other slot', async () => {
    const p = await createPartner(t.db);
    const [o1, o2, o3, o4] = [await createOrg(t.db, p.id), await createOrg(t.db, p.id), await createOrg(t.db, p.id), await createOrg(t.db, p.id)].map((o) => o.id);
    const admin = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: p.id }));
    const narrow = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: p.id, orgAccess: 'selected', orgIds: [o1!, o3!] }));
    const none = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: p.id, orgAccess: 'none' }));
    const reorder = (session: Session, organizationOrder: string[]) =>
      as(t.app, session)({ method: 'PATCH', url: '/api/v1/orgs/organizations/order', payload: { organizationOrder } });
    const listed = (session: Session) => as(t.app, session)({ method: 'GET', url: '/api/v1/orgs/' }).then((r) => (r.json().data as { id: string }[]).map((o) => o.id));

    // Without a stored order the display is by name: the hidden organizations keep those slots.
    const byName = await listed(admin);
    const first = await reorder(narrow, [o3!, o1!]);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { organizationOrder: [o3!, o1!] });
    const afterFirst = await listed(admin);
    for (const hidden of [o2!, o4!]) assert.equal(afterFirst.indexOf(hidden), byName.indexOf(hidden));
    assert.ok(afterFirst.indexOf(o3!) < afterFirst.indexOf(o1!));

    assert.equal((await reorder(admin, [o4!, o3!, o2!, o1!])).statusCode, 200);
    // A hidden id in the body is dropped like an unknown one, and reveals nothing in the answer.
    const res = await reorder(narrow, [o1!, o2!, o3!]);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { organizationOrder: [o1!, o3!] });
    assert.deepEqual(await listed(admin), [o4!, o1!, o2!, o3!]);
    assert.deepEqual(await listed(narrow), [o1!, o3!]);
    assert.deepEqual((await as(t.app, admin)({ method: 'GET', url: '/api/v1/orgs/partners/me' })).json().settings.organizationOrder, [o4!, o1!, o2!, o3!]);

    // Omitted reachable organizations follow in registration order, inside the caller's slots.
    assert.deepEqual((await reorder(narrow, [o3!])).json(), { organizationOrder: [o3!, o1!] });
    assert.deepEqual(await listed(admin), [o4!, o3!, o2!, o1!]);
    // A caller reaching none of them changes nothing.
    assert.deepEqual((await reorder(none, [o2!, o1!])).json(), { organizationOrder: [] });
    assert.deepEqual(await listed(admin), [o4!, o3!, o2!, o1!]);
    // Concurrent narrow writes are serialised: the hidden slots survive every interleaving.
    await Promise.all([reorder(narrow, [o1!, o3!]), reorder(narrow, [o3!, o1!]), reorder(narrow, [o1!, o3!])]);
    const final = await listed(admin);
    assert.deepEqual([final[0], final[2]], [o4!, o2!]);
    assert.deepEqual([final[1], final[3]].sort(), [o1!, o3!].sort());
  });

  it('applies a suspension to the organization’s users at once: reads stay, writes are refused', async () => {
    const org = await createOrg(t.db, partner.id);
    const user = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }));
    const newUser = { email: `x-${randomBytes(3).toString('hex')}@x.test`, name: 'X', password: 'long-enough-pw', scope: 'organization', role: 'readonly' };
    const suspended = await call('system')({ method: 'PATCH', url: `/api/v1/orgs/organizations/${org.id}`, payload: { status: 'suspended' } });
    assert.equal(suspended.json().status, 'suspended', suspended.body);
    assert.equal((await as(t.app, user)({ method: 'GET', url: '/api/v1/orgs/' })).statusCode, 200);
    assertProblem(await as(t.app, user)({ method: 'POST', url: '/api/v1/users', payload: newUser }), 403, 'ORG_SUSPENDED');
  });
});
