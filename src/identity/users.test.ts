// /users and the scope math behind every caller: what each scope reaches, what it may create or
// change, and that it never hands out more than it holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg, type TestUser } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session, loginWithMfa } from '../../test/support/clients.js';

describe('users and caller scope', () => {
  let t: TestApp;
  let partnerId: string;
  let orgA: TestOrg, orgB: TestOrg, orgGone: TestOrg, orgQ: TestOrg, orgSuspended: TestOrg;
  const u: Record<string, TestUser> = {};
  const s: Record<string, Session> = {};
  const call = (who: string) => as(t.app, s[who]!);
  const visibleIds = async (who: string, query: string) => {
    const res = await call(who)({ method: 'GET', url: `/api/v1/users?limit=100&${query}` });
    assert.equal(res.statusCode, 200, res.body);
    return new Set((res.json().data as { id: string }[]).map((x) => x.id));
  };
  const newUser = (overrides: Record<string, unknown>) => ({
    email: `new-${Math.random().toString(36).slice(2)}@example.test`,
    name: 'New User',
    password: 'long-enough-pw',
    role: 'technician',
    ...overrides,
  });

  before(async () => {
    t = await testApp();
    const p = await createPartner(t.db);
    partnerId = p.id;
    const q = await createPartner(t.db);
    orgA = await createOrg(t.db, p.id);
    orgB = await createOrg(t.db, p.id);
    orgGone = await createOrg(t.db, p.id, { deleted: true });
    orgSuspended = await createOrg(t.db, p.id, { status: 'suspended' });
    orgQ = await createOrg(t.db, q.id);
    u.system = await createUser(t.db, { scope: 'system' });
    u.partnerAll = await createUser(t.db, { scope: 'partner', partnerId: p.id, orgAccess: 'all' });
    // orgQ belongs to another partner: the grant must not reach it even if it is listed.
    u.partnerSelected = await createUser(t.db, { scope: 'partner', partnerId: p.id, orgAccess: 'selected', orgIds: [orgA.id, orgQ.id, orgGone.id] });
    u.partnerNone = await createUser(t.db, { scope: 'partner', partnerId: p.id, orgAccess: 'none' });
    u.orgAdminA = await createUser(t.db, { scope: 'organization', orgId: orgA.id });
    u.orgReadonlyA = await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' });
    u.orgAdminB = await createUser(t.db, { scope: 'organization', orgId: orgB.id });
    u.orgAdminSuspended = await createUser(t.db, { scope: 'organization', orgId: orgSuspended.id });
    u.otherPartner = await createUser(t.db, { scope: 'partner', partnerId: q.id, orgAccess: 'all' });
    u.orgQUser = await createUser(t.db, { scope: 'organization', orgId: orgQ.id });
    for (const [name, user] of Object.entries(u)) s[name] = await loginWithMfa(t.app, user, t.clock);
  });
  after(() => t.close());

  it('needs an MFA-verified session for user writes, checking the permission first', async () => {
    // The attack: a password-only admin mints a new admin, which then enrols MFA and holds keys.
    // Its own organization, so the other tests' reach counts stay as they are.
    const org = await createOrg(t.db, (await createPartner(t.db)).id);
    const passwordOnly = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }));
    const admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
    const target = await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' });
    const created = await as(t.app, passwordOnly)({
      method: 'POST', url: '/api/v1/users', payload: { email: `minted-${Date.now()}@acme.test`, name: 'Minted', password: 'long-enough-pw', scope: 'organization', role: 'admin' },
    });
    assertProblem(created, 403, 'MFA_REQUIRED');
    assertProblem(await as(t.app, passwordOnly)({ method: 'PATCH', url: `/api/v1/users/${target.id}`, payload: { role: 'admin' } }), 403, 'MFA_REQUIRED');
    assertProblem(await as(t.app, passwordOnly)({ method: 'DELETE', url: `/api/v1/users/${target.id}` }), 403, 'MFA_REQUIRED');
    assert.equal((await as(t.app, passwordOnly)({ method: 'GET', url: `/api/v1/users/${target.id}` })).statusCode, 200, 'reads need no MFA');
    // API.md §2: a caller lacking both the permission and MFA hears about the permission.
    const readonly = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' }));
    assertProblem(await as(t.app, readonly)({ method: 'DELETE', url: `/api/v1/users/${target.id}` }), 403, 'PERMISSION_DENIED');
    assert.equal((await as(t.app, admin)({ method: 'PATCH', url: `/api/v1/users/${target.id}`, payload: { name: 'Renamed' } })).statusCode, 200);
  });

  it('gives each scope exactly its reach', async () => {
    const partnerLevel = [u.partnerAll!.id, u.partnerSelected!.id, u.partnerNone!.id];
    const everyoneOfP = [...partnerLevel, u.orgAdminA!.id, u.orgReadonlyA!.id, u.orgAdminB!.id, u.orgAdminSuspended!.id];
    const outsiders = [u.system!.id, u.otherPartner!.id, u.orgQUser!.id];

    assert.deepEqual([...(await visibleIds('system', `partnerId=${partnerId}`))].sort(), [...everyoneOfP].sort());
    for (const id of outsiders) assert.equal((await call('system')({ method: 'GET', url: `/api/v1/users/${id}` })).statusCode, 200);

    assert.deepEqual([...(await visibleIds('partnerAll', ''))].sort(), [...everyoneOfP].sort());
    assert.deepEqual([...(await visibleIds('partnerSelected', ''))].sort(), [...partnerLevel, u.orgAdminA!.id, u.orgReadonlyA!.id].sort());
    assert.deepEqual([...(await visibleIds('partnerNone', ''))].sort(), [...partnerLevel].sort());
    assert.deepEqual([...(await visibleIds('orgAdminA', ''))].sort(), [u.orgAdminA!.id, u.orgReadonlyA!.id].sort());
    // A filter naming an organization outside the caller's reach is an empty list, not an error.
    assert.equal((await visibleIds('orgAdminA', `orgId=${orgB.id}`)).size, 0);
  });

  it('hides users outside the caller’s reach from reads (404) and refuses changes to them (403)', async () => {
    assertProblem(await call('partnerAll')({ method: 'GET', url: `/api/v1/users/${u.orgQUser!.id}` }), 404, 'NOT_FOUND');
    assertProblem(await call('orgAdminA')({ method: 'GET', url: `/api/v1/users/${u.orgAdminB!.id}` }), 404, 'NOT_FOUND');
    assertProblem(await call('partnerSelected')({ method: 'GET', url: `/api/v1/users/${u.orgAdminB!.id}` }), 404, 'NOT_FOUND');
    assert.equal((await call('system')({ method: 'GET', url: `/api/v1/users/${u.orgQUser!.id}` })).statusCode, 200);
    assertProblem(await call('partnerAll')({ method: 'PATCH', url: `/api/v1/users/${u.orgQUser!.id}`, payload: { name: 'x' } }), 403, 'PERMISSION_DENIED');
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/users/${u.orgAdminB!.id}`, payload: { name: 'x' } }), 403, 'PERMISSION_DENIED');
    assertProblem(await call('partnerAll')({ method: 'DELETE', url: `/api/v1/users/${u.otherPartner!.id}` }), 403, 'PERMISSION_DENIED');
    const nobody = '00000000-0000-4000-8000-000000000000';
    assertProblem(await call('partnerAll')({ method: 'PATCH', url: `/api/v1/users/${nobody}`, payload: { name: 'x' } }), 404, 'NOT_FOUND');
    assertProblem(await call('partnerAll')({ method: 'DELETE', url: `/api/v1/users/${nobody}` }), 404, 'NOT_FOUND');
    // The refused change left the user as it was.
    assert.notEqual((await call('system')({ method: 'GET', url: `/api/v1/users/${u.orgQUser!.id}` })).json().name, 'x');
  });

  it('creates users only inside the caller’s reach', async () => {
    const post = (who: string, body: Record<string, unknown>) => call(who)({ method: 'POST', url: '/api/v1/users', payload: newUser(body) });

    const created = await post('partnerAll', { scope: 'organization', orgId: orgA.id });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().partnerId, partnerId);
    assert.equal(created.json().orgId, orgA.id);
    assert.equal(created.json().password, undefined);
    assertProblem(await post('partnerAll', { scope: 'organization', orgId: orgQ.id }), 403, 'PERMISSION_DENIED');
    assertProblem(await post('partnerAll', { scope: 'system' }), 403, 'PERMISSION_DENIED');
    assertProblem(await post('partnerAll', { scope: 'partner', partnerId: orgQ.partnerId }), 403, 'PERMISSION_DENIED');

    const own = await post('orgAdminA', { scope: 'organization' });
    assert.equal(own.statusCode, 201, own.body);
    assert.equal(own.json().orgId, orgA.id);
    assertProblem(await post('orgAdminA', { scope: 'organization', orgId: orgB.id }), 403, 'PERMISSION_DENIED');
    assertProblem(await post('orgAdminA', { scope: 'partner' }), 403, 'PERMISSION_DENIED');
    assertProblem(await post('orgReadonlyA', { scope: 'organization' }), 403, 'PERMISSION_DENIED');

    assertProblem(await post('system', { scope: 'organization', orgId: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND');
    assertProblem(await post('system', { scope: 'partner', partnerId: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND');
  });

  it('never grants more organization access than the caller holds', async () => {
    const post = (body: Record<string, unknown>) => call('partnerSelected')({ method: 'POST', url: '/api/v1/users', payload: newUser({ scope: 'partner', ...body }) });
    assertProblem(await post({ orgAccess: 'all' }), 403, 'PERMISSION_DENIED');
    assertProblem(await post({ orgAccess: 'selected', orgIds: [orgB.id] }), 403, 'PERMISSION_DENIED');
    const ok = await post({ orgAccess: 'selected', orgIds: [orgA.id] });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual(ok.json().orgIds, [orgA.id]);
    // …nor lets a narrower caller take over a broader account.
    assertProblem(
      await call('partnerSelected')({ method: 'PATCH', url: `/api/v1/users/${u.partnerAll!.id}`, payload: { password: 'takeover-password' } }),
      403,
      'PERMISSION_DENIED',
    );
    assertProblem(await call('partnerAll')({ method: 'POST', url: '/api/v1/users', payload: newUser({ scope: 'partner', orgAccess: 'selected', orgIds: [orgQ.id] }) }), 400, 'VALIDATION_FAILED');
  });

  it('rejects bad input with a problem naming the field', async () => {
    const post = (payload: unknown) => call('system')({ method: 'POST', url: '/api/v1/users', payload: payload as object });
    const unknownField = assertProblem(await post(newUser({ scope: 'system', bogus: 1 })), 400, 'VALIDATION_FAILED');
    assert.deepEqual(unknownField.errors, [{ path: 'body.bogus', message: 'is not an allowed field' }]);
    const missing = assertProblem(await post({ scope: 'system' }), 400, 'VALIDATION_FAILED');
    assert.match(String(missing.detail), /body\.\w+ is required/);
    assertProblem(await post(newUser({ scope: 'system', email: 'not-an-email' })), 400, 'VALIDATION_FAILED');
    assertProblem(await post(newUser({ scope: 'system', password: 'short' })), 400, 'VALIDATION_FAILED');
    assertProblem(await post(newUser({ scope: 'system', role: 'owner' })), 400, 'VALIDATION_FAILED');
    assertProblem(await post(newUser({ scope: 'system', name: 42 })), 400, 'VALIDATION_FAILED');
    assertProblem(await call('system')({ method: 'GET', url: '/api/v1/users/not-a-uuid' }), 400, 'VALIDATION_FAILED');
    assertProblem(await call('system')({ method: 'GET', url: '/api/v1/users?limit=abc' }), 400, 'VALIDATION_FAILED');
    assertProblem(await call('system')({ method: 'PATCH', url: `/api/v1/users/${u.orgAdminB!.id}`, payload: {} }), 400, 'EMPTY_UPDATE');
  });

  it('refuses a second account with the same e-mail, whatever its case', async () => {
    const body = newUser({ scope: 'organization', orgId: orgB.id });
    assert.equal((await call('system')({ method: 'POST', url: '/api/v1/users', payload: body })).statusCode, 201);
    const dup = await call('system')({ method: 'POST', url: '/api/v1/users', payload: { ...body, email: body.email.toUpperCase() } });
    assertProblem(dup, 409, 'CONFLICT');
  });

  it('clamps pagination and reports totals', async () => {
    const res = await call('partnerAll')({ method: 'GET', url: '/api/v1/users?page=0&limit=1000' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().pagination.page, 1);
    assert.equal(res.json().pagination.limit, 100);
    const small = (await call('partnerAll')({ method: 'GET', url: '/api/v1/users?limit=0&page=' })).json();
    assert.equal(small.pagination.limit, 1);
    assert.equal(small.data.length, 1);
    assert.equal(small.pagination.totalPages, small.pagination.total);
    const skip = (await call('partnerAll')({ method: 'GET', url: '/api/v1/users?skipCount=true' })).json();
    assert.equal(skip.pagination.total, null);
    assert.equal(skip.pagination.totalPages, null);
  });

  it('ends a user’s sessions when an admin changes the password, and on deletion', async () => {
    const victim = await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' });
    const session = await login(t.app, victim);
    const patch = await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/users/${victim.id}`, payload: { password: 'brand-new-password', name: 'Renamed' } });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(patch.json().name, 'Renamed');
    assertProblem(await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    const fresh = await login(t.app, { email: victim.email, password: 'brand-new-password' });

    const del = await call('orgAdminA')({ method: 'DELETE', url: `/api/v1/users/${victim.id}` });
    assert.deepEqual(del.json(), { success: true });
    assertProblem(await as(t.app, fresh)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    assertProblem(await call('orgAdminA')({ method: 'GET', url: `/api/v1/users/${victim.id}` }), 404, 'NOT_FOUND');
    assertProblem(await call('orgAdminA')({ method: 'DELETE', url: `/api/v1/users/${victim.id}` }), 404, 'NOT_FOUND');
    assertProblem(
      await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: victim.email, password: 'brand-new-password' } }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('disables a user: no sign-in by any means, sessions ended at once; enabling lets it back in', async () => {
    const victim = await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' });
    const plain = await login(t.app, { email: victim.email, password: victim.password });
    const withMfa = await loginWithMfa(t.app, victim, t.clock);
    const patch = await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/users/${victim.id}`, payload: { disabled: true } });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(patch.json().disabled, true);
    for (const session of [withMfa, plain]) {
      assertProblem(await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: session.refreshToken } }), 401, 'UNAUTHENTICATED');
    }
    // The right password learns why; the MFA step is never reached.
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: victim.email, password: victim.password } }), 403, 'ACCOUNT_DISABLED');
    const wrong = assertProblem(
      await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: victim.email, password: 'not-the-password' } }), 401, 'UNAUTHENTICATED');
    assert.doesNotMatch(String(wrong.detail), /disabled/);
    // Listed as disabled; disabling again changes nothing; nobody disables themselves.
    const listed = await call('orgAdminA')({ method: 'GET', url: `/api/v1/users/${victim.id}` });
    assert.equal(listed.json().disabled, true);
    assert.equal((await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/users/${victim.id}`, payload: { disabled: true } })).statusCode, 200);
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/users/${u.orgAdminA!.id}`, payload: { disabled: true } }), 403, 'PERMISSION_DENIED');
    // Another organization's admin cannot reach it.
    assertProblem(await call('orgAdminB')({ method: 'PATCH', url: `/api/v1/users/${victim.id}`, payload: { disabled: false } }), 403, 'PERMISSION_DENIED');

    const enabled = await call('orgAdminA')({ method: 'PATCH', url: `/api/v1/users/${victim.id}`, payload: { disabled: false } });
    assert.equal(enabled.json().disabled, false);
    const challenge = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: victim.email, password: victim.password } });
    assert.equal(challenge.statusCode, 200, challenge.body);
    assert.equal(challenge.json().mfaRequired, true);
  });

  it('applies role changes at once and forbids changing one’s own role or deleting oneself', async () => {
    const tech = await createUser(t.db, { scope: 'organization', orgId: orgB.id, role: 'technician' });
    const session = await login(t.app, tech);
    assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/users' })).statusCode, 403);
    await call('orgAdminB')({ method: 'PATCH', url: `/api/v1/users/${tech.id}`, payload: { role: 'admin' } });
    assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/users' })).statusCode, 200);

    assertProblem(await call('orgAdminB')({ method: 'PATCH', url: `/api/v1/users/${u.orgAdminB!.id}`, payload: { role: 'readonly' } }), 403, 'PERMISSION_DENIED');
    assertProblem(await call('orgAdminB')({ method: 'DELETE', url: `/api/v1/users/${u.orgAdminB!.id}` }), 403, 'PERMISSION_DENIED');
  });

  it('lets users of a suspended organization read but not write', async () => {
    assert.equal((await call('orgAdminSuspended')({ method: 'GET', url: '/api/v1/users' })).statusCode, 200);
    assertProblem(
      await call('orgAdminSuspended')({ method: 'POST', url: '/api/v1/users', payload: newUser({ scope: 'organization' }) }),
      403,
      'ORG_SUSPENDED',
    );
  });
});
