// /orgs/partners through HTTP: system administration, self-service with merged settings, the
// permission matrix, soft deletion, slug uniqueness (also under concurrency) and the audit trail.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestUser } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';

const slug = () => `acme-${randomBytes(4).toString('hex')}`;

describe('partners', () => {
  let t: TestApp;
  const s: Record<string, Session> = {};
  const u: Record<string, TestUser> = {};
  let partnerId: string;
  const call = (who: string) => as(t.app, s[who]!);

  before(async () => {
    t = await testApp();
    const partner = await createPartner(t.db);
    partnerId = partner.id;
    const org = await createOrg(t.db, partner.id);
    u.system = await createUser(t.db, { scope: 'system' });
    u.partnerAdmin = await createUser(t.db, { scope: 'partner', partnerId: partner.id });
    u.partnerReadonly = await createUser(t.db, { scope: 'partner', partnerId: partner.id, role: 'readonly' });
    u.orgAdmin = await createUser(t.db, { scope: 'organization', orgId: org.id });
    for (const [k, user] of Object.entries(u)) s[k] = await login(t.app, user);
  });
  after(() => t.close());

  it('lets system scope create, read, list, update and soft-delete partners', async () => {
    const marker = randomBytes(4).toString('hex');
    const name = `Acme Managed Services ${marker}`;
    const created = await call('system')({ method: 'POST', url: '/api/v1/orgs/partners', payload: { name, slug: slug(), billingEmail: 'billing@acme.test', maxOrganizations: 5 } });
    assert.equal(created.statusCode, 201, created.body);
    const p = created.json();
    assert.deepEqual({ status: p.status, type: p.type, plan: p.plan, maxOrganizations: p.maxOrganizations, deletedAt: p.deletedAt }, { status: 'active', type: 'msp', plan: 'free', maxOrganizations: 5, deletedAt: null });

    assert.equal((await call('system')({ method: 'GET', url: `/api/v1/orgs/partners/${p.id}` })).json().name, name);
    const list = (await call('system')({ method: 'GET', url: '/api/v1/orgs/partners?limit=500&page=0' })).json();
    assert.equal(list.pagination.limit, 100);
    assert.equal(list.pagination.page, 1);
    assert.ok(typeof list.pagination.total === 'number' && list.pagination.total >= 2);

    const patched = await call('system')({ method: 'PATCH', url: `/api/v1/orgs/partners/${p.id}`, payload: { plan: 'pro', name: `Acme MSP ${marker}` } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual({ plan: patched.json().plan, name: patched.json().name, slug: patched.json().slug }, { plan: 'pro', name: `Acme MSP ${marker}`, slug: p.slug });
    assertProblem(await call('system')({ method: 'PATCH', url: `/api/v1/orgs/partners/${p.id}`, payload: {} }), 400, 'EMPTY_UPDATE');

    assert.deepEqual((await call('system')({ method: 'DELETE', url: `/api/v1/orgs/partners/${p.id}` })).json(), { success: true });
    assertProblem(await call('system')({ method: 'GET', url: `/api/v1/orgs/partners/${p.id}` }), 404, 'NOT_FOUND');
    assertProblem(await call('system')({ method: 'PATCH', url: `/api/v1/orgs/partners/${p.id}`, payload: { plan: 'free' } }), 404, 'NOT_FOUND');
    assertProblem(await call('system')({ method: 'DELETE', url: `/api/v1/orgs/partners/${p.id}` }), 404, 'NOT_FOUND');
    const ids = ((await call('system')({ method: 'GET', url: '/api/v1/orgs/partners?limit=100' })).json().data as { id: string }[]).map((x) => x.id);
    assert.ok(!ids.includes(p.id));

    await t.app.auditSealer.sealNow();
    const trail = (await call('system')({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=platform&resource=${marker}&limit=10` })).json().data as { action: string; details: Record<string, unknown> }[];
    assert.deepEqual(trail.map((e) => e.action).sort(), ['partner.create', 'partner.delete', 'partner.update']);
    assert.deepEqual((trail.find((e) => e.action === 'partner.update')!.details.changedFields as string[]).sort(), ['name', 'plan']);
  });

  it('keeps slugs unique among live partners, also under concurrency, and frees them on deletion', async () => {
    const taken = slug();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => call('system')({ method: 'POST', url: '/api/v1/orgs/partners', payload: { name: 'Race', slug: taken } })),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409, 409]);
    assertProblem(results.find((r) => r.statusCode === 409)!, 409, 'CONFLICT');
    const winner = results.find((r) => r.statusCode === 201)!.json();
    await call('system')({ method: 'DELETE', url: `/api/v1/orgs/partners/${winner.id}` });
    assert.equal((await call('system')({ method: 'POST', url: '/api/v1/orgs/partners', payload: { name: 'Again', slug: taken } })).statusCode, 201);
  });

  it('rejects bad input with 400 and a named field', async () => {
    const post = (payload: Record<string, unknown>) => call('system')({ method: 'POST', url: '/api/v1/orgs/partners', payload });
    for (const payload of [
      { name: 'X', slug: 'Not URL safe' },
      { name: 'X', slug: 'a'.repeat(101) },
      { name: 'x'.repeat(256), slug: slug() },
      { name: '', slug: slug() },
      { name: 'X', slug: slug(), type: 'reseller' },
      { name: 'X', slug: slug(), maxOrganizations: -1 },
      { name: 'X', slug: slug(), unknown: true },
      { name: 'X', slug: slug(), settings: { timezone: 'Mars/Olympus' } },
      { name: 'X', slug: slug(), settings: { language: 'fr' } },
    ]) {
      assertProblem(await post(payload), 400, 'VALIDATION_FAILED');
    }
    assertProblem(await call('system')({ method: 'GET', url: '/api/v1/orgs/partners/not-a-uuid' }), 400, 'VALIDATION_FAILED');
  });

  it('admits only system scope to partner administration', async () => {
    for (const who of ['partnerAdmin', 'orgAdmin']) {
      assertProblem(await call(who)({ method: 'GET', url: '/api/v1/orgs/partners' }), 403, 'PERMISSION_DENIED');
      assertProblem(await call(who)({ method: 'POST', url: '/api/v1/orgs/partners', payload: { name: 'X', slug: slug() } }), 403, 'PERMISSION_DENIED');
      assertProblem(await call(who)({ method: 'GET', url: `/api/v1/orgs/partners/${partnerId}` }), 403, 'PERMISSION_DENIED');
    }
    assertProblem(await call('system')({ method: 'GET', url: '/api/v1/orgs/partners/me' }), 403, 'PERMISSION_DENIED');
    assertProblem(await call('orgAdmin')({ method: 'GET', url: '/api/v1/orgs/partners/me' }), 403, 'PERMISSION_DENIED');
    assertProblem(await call('partnerReadonly')({ method: 'PATCH', url: '/api/v1/orgs/partners/me', payload: { name: 'X' } }), 403, 'PERMISSION_DENIED');
    assertProblem(await call('partnerAdmin')({ method: 'PATCH', url: '/api/v1/orgs/partners/me', payload: {} }), 400, 'EMPTY_UPDATE');
  });

  it('lets a partner read and update itself, merging settings key by key', async () => {
    const me = await call('partnerAdmin')({ method: 'GET', url: '/api/v1/orgs/partners/me' });
    assert.equal(me.json().id, partnerId);
    const first = await call('partnerAdmin')({
      method: 'PATCH',
      url: '/api/v1/orgs/partners/me',
      payload: { settings: { timezone: 'Europe/Zurich', dateFormat: 'YYYY-MM-DD', businessHours: { preset: 'custom', custom: { monday: { start: '09:00', end: '17:00' } } }, contact: { name: 'Ops' } } },
    });
    assert.equal(first.statusCode, 200, first.body);
    const second = await call('partnerAdmin')({
      method: 'PATCH',
      url: '/api/v1/orgs/partners/me',
      payload: { billingEmail: 'ap@partner.test', settings: { contact: { email: 'ops@partner.test' }, businessHours: { custom: { tuesday: { closed: true } } } } },
    });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(second.json().settings, {
      timezone: 'Europe/Zurich',
      dateFormat: 'YYYY-MM-DD',
      businessHours: { preset: 'custom', custom: { monday: { start: '09:00', end: '17:00' }, tuesday: { closed: true } } },
      contact: { name: 'Ops', email: 'ops@partner.test' },
    });
    assert.equal(second.json().billingEmail, 'ap@partner.test');
    for (const payload of [{}, { slug: 'mine' }, { settings: { organizationOrder: [] } }, { settings: { timeFormat: '25h' } }, { settings: { businessHours: { custom: { monday: { start: '9am' } } } } }]) {
      assert.equal((await call('partnerAdmin')({ method: 'PATCH', url: '/api/v1/orgs/partners/me', payload })).statusCode, 400, JSON.stringify(payload));
    }
    await t.app.auditSealer.sealNow();
    const trail = (await call('system')({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=platform&action=partner.settings.update&user=${encodeURIComponent(u.partnerAdmin!.email)}` })).json().data as { details: { changedFields: string[] } }[];
    assert.equal(trail.length, 2);
    assert.deepEqual(trail[0]!.details.changedFields.sort(), ['billingEmail', 'settings.businessHours', 'settings.contact']);
  });

  it('shows a partner user reaching some organizations only their ids in organizationOrder', async () => {
    const partner = await createPartner(t.db);
    const [o1, o2, o3] = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)].map((o) => o.id);
    const admin = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id }));
    const narrow = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'selected', orgIds: [o2!] }));
    const none = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'none' }));
    await as(t.app, admin)({ method: 'PATCH', url: '/api/v1/orgs/organizations/order', payload: { organizationOrder: [o3!, o2!, o1!] } });
    const order = (res: { json(): { settings: { organizationOrder?: string[] } } }) => res.json().settings.organizationOrder;

    assert.deepEqual(order(await as(t.app, admin)({ method: 'GET', url: '/api/v1/orgs/partners/me' })), [o3!, o2!, o1!]);
    assert.deepEqual(order(await as(t.app, narrow)({ method: 'GET', url: '/api/v1/orgs/partners/me' })), [o2!]);
    assert.deepEqual(order(await as(t.app, none)({ method: 'GET', url: '/api/v1/orgs/partners/me' })), []);
    const patched = await as(t.app, narrow)({ method: 'PATCH', url: '/api/v1/orgs/partners/me', payload: { settings: { timeFormat: '24h' } } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(order(patched), [o2!]);
    // The stored order is untouched by the filtered views.
    assert.deepEqual(order(await call('system')({ method: 'GET', url: `/api/v1/orgs/partners/${partner.id}` })), [o3!, o2!, o1!]);
  });

  it('applies a status change to the partner guard at once', async () => {
    const partner = await createPartner(t.db);
    const user = await createUser(t.db, { scope: 'partner', partnerId: partner.id });
    const session = await login(t.app, user);
    assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/orgs/partners/me' })).statusCode, 200);
    await call('system')({ method: 'PATCH', url: `/api/v1/orgs/partners/${partner.id}`, payload: { status: 'suspended' } });
    assertProblem(await as(t.app, session)({ method: 'GET', url: '/api/v1/orgs/partners/me' }), 403, 'PARTNER_INACTIVE');
    await call('system')({ method: 'PATCH', url: `/api/v1/orgs/partners/${partner.id}`, payload: { status: 'active' } });
    assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/orgs/partners/me' })).statusCode, 200);
    await call('system')({ method: 'DELETE', url: `/api/v1/orgs/partners/${partner.id}` });
    assertProblem(await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' }), 403, 'PARTNER_INACTIVE');
  });
});
