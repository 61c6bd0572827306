// /api-keys through HTTP: the key shown once and only its hash stored, validation, permissions and
// MFA, key management by scope, the state table (update, rotate, revoke), and the audit trail.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';

const NOBODY = '00000000-0000-4000-8000-000000000000';

describe('API key management', () => {
  let t: TestApp;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let foreign: TestOrg;
  const s: Record<string, Session> = {};
  const call = (who: string) => as(t.app, s[who]!);
  const create = (who: string, payload: Record<string, unknown>) => call(who)({ method: 'POST', url: '/api/v1/api-keys', payload });
  const withKey = (key: string, url = '/api/v1/auth/api-key') => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

  before(async () => {
    t = await testApp();
    const partner = await createPartner(t.db);
    orgA = await createOrg(t.db, partner.id);
    orgB = await createOrg(t.db, partner.id);
    foreign = await createOrg(t.db, (await createPartner(t.db)).id);
    const users = {
      system: await createUser(t.db, { scope: 'system' }),
      partner: await createUser(t.db, { scope: 'partner', partnerId: partner.id }),
      orgAdminA: await createUser(t.db, { scope: 'organization', orgId: orgA.id }),
      orgAdminB: await createUser(t.db, { scope: 'organization', orgId: orgB.id }),
    };
    for (const [k, user] of Object.entries(users)) s[k] = await loginWithMfa(t.app, user, t.clock);
    s.orgAdminNoMfa = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id }));
    s.readonlyA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' }));
  });
  after(() => t.close());

  it('creates a key shown once, stores only its SHA-256, and never returns the hash', async () => {
    const res = await create('orgAdminA', { orgId: orgA.id, name: 'CI pipeline', scopes: ['devices:read', 'audit:read'], rateLimit: 500 });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.match(body.key, /^svc_[A-Za-z0-9_-]{32}$/);
    assert.equal(body.keyPrefix, body.key.slice(0, 12));
    assert.match(body.warning, /only once/);
    assert.deepEqual(
      { orgId: body.orgId, name: body.name, scopes: body.scopes, rateLimit: body.rateLimit, status: body.status, expiresAt: body.expiresAt, usageCount: body.usageCount },
      { orgId: orgA.id, name: 'CI pipeline', scopes: ['devices:read', 'audit:read'], rateLimit: 500, status: 'active', expiresAt: null, usageCount: 0 },
    );
    assert.equal(typeof body.createdBy, 'string');
    assert.equal('keyHash' in body, false);
    const stored = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query<Record<string, unknown>>(`select * from api_keys where id = $1`, [body.id]));
    assert.equal(stored.rows[0]!.key_hash, createHash('sha256').update(body.key).digest('hex'));
    assert.equal(JSON.stringify(stored.rows[0]).includes(body.key), false, 'the key itself is not stored');

    const got = await call('orgAdminA')({ method: 'GET', url: `/api/v1/api-keys/${body.id}` });
    assert.equal(got.statusCode, 200);
    assert.equal('key' in got.json() || 'keyHash' in got.json(), false);
    const list = await call('orgAdminA')({ method: 'GET', url: '/api/v1/api-keys' });
    assert.equal(list.body.includes(body.key) || list.body.includes('keyHash') || list.body.includes(stored.rows[0]!.key_hash as string), false);
    assert.equal((await withKey(body.key)).statusCode, 200);
  });

  it('refuses bad input with 400 and names the field', async () => {
    const base = { orgId: orgA.id, name: 'k' };
    const bad: Record<string, unknown>[] = [
      { ...base, rateLimit: 0 }, { ...base, rateLimit: 100001 }, { ...base, rateLimit: 1.5 }, { ...base, rateLimit: '10' },
      { ...base, name: '' }, { ...base, name: 'x'.repeat(256) }, { ...base, name: '   ' }, { orgId: orgA.id },
      { ...base, expiresAt: '2001-01-01T00:00:00Z' }, { ...base, expiresAt: 'tomorrow' }, { ...base, expiresAt: '2030-13-01' },
      { ...base, scopes: ['devices:read', 'root'] }, { ...base, scopes: 'devices:read' }, { ...base, keyHash: 'x' }, { ...base, orgId: 'nope' },
    ];
    for (const payload of bad) {
      const problem = assertProblem(await create('orgAdminA', payload), 400, 'VALIDATION_FAILED');
      assert.ok(Array.isArray(problem.errors), JSON.stringify(payload));
    }
    const future = new Date(t.clock.now() + 86_400_000).toISOString();
    const ok = await create('orgAdminA', { ...base, expiresAt: future, scopes: ['audit:read', 'audit:read'] });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual([ok.json().expiresAt, ok.json().scopes, ok.json().rateLimit], [future, ['audit:read'], 1000]);
  });

  it('needs organizations:write with MFA to manage and organizations:read to view', async () => {
    assertProblem(await create('readonlyA', { orgId: orgA.id, name: 'k' }), 403, 'PERMISSION_DENIED');
    assertProblem(await create('orgAdminNoMfa', { orgId: orgA.id, name: 'k' }), 403, 'MFA_REQUIRED');
    const key = (await create('orgAdminA', { orgId: orgA.id, name: 'k' })).json();
    for (const [method, url, payload] of [['PATCH', `/api/v1/api-keys/${key.id}`, { name: 'x' }], ['POST', `/api/v1/api-keys/${key.id}/rotate`, undefined], ['DELETE', `/api/v1/api-keys/${key.id}`, undefined]] as const) {
      assertProblem(await call('orgAdminNoMfa')({ method, url, ...(payload ? { payload } : {}) }), 403, 'MFA_REQUIRED');
      assertProblem(await call('readonlyA')({ method, url, ...(payload ? { payload } : {}) }), 403, 'PERMISSION_DENIED');
    }
    assert.equal((await call('readonlyA')({ method: 'GET', url: `/api/v1/api-keys/${key.id}` })).statusCode, 200);
    assert.equal((await call('orgAdminNoMfa')({ method: 'GET', url: '/api/v1/api-keys' })).statusCode, 200);
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/api-keys' }), 401, 'UNAUTHENTICATED');
  });

  it('manages keys by scope: own organization, reachable organizations, any organization', async () => {
    assertProblem(await create('orgAdminA', { orgId: orgB.id, name: 'k' }), 403, 'ORG_ACCESS_DENIED');
    assertProblem(await create('partner', { orgId: foreign.id, name: 'k' }), 403, 'ORG_ACCESS_DENIED');
    assertProblem(await create('partner', { orgId: NOBODY, name: 'k' }), 403, 'ORG_ACCESS_DENIED');
    assertProblem(await create('system', { orgId: NOBODY, name: 'k' }), 404, 'NOT_FOUND');
    const inB = (await create('partner', { orgId: orgB.id, name: 'partner made' })).json();
    const inForeign = (await create('system', { orgId: foreign.id, name: 'system made' })).json();
    assert.equal(inForeign.orgId, foreign.id);

    // Another organization's key is 404 for every verb, and absent from lists.
    for (const [method, url, payload] of [['GET', '', undefined], ['PATCH', '', { name: 'x' }], ['POST', '/rotate', undefined], ['DELETE', '', undefined]] as const) {
      assertProblem(await call('orgAdminA')({ method, url: `/api/v1/api-keys/${inB.id}${url}`, ...(payload ? { payload } : {}) }), 404, 'NOT_FOUND');
      assertProblem(await call('partner')({ method, url: `/api/v1/api-keys/${inForeign.id}${url}`, ...(payload ? { payload } : {}) }), 404, 'NOT_FOUND');
    }
    const listA = (await call('orgAdminA')({ method: 'GET', url: '/api/v1/api-keys?limit=100' })).json();
    assert.ok(listA.data.length > 0 && listA.data.every((k: { orgId: string }) => k.orgId === orgA.id));
    const listPartner = (await call('partner')({ method: 'GET', url: '/api/v1/api-keys?limit=100' })).json();
    assert.ok(listPartner.data.some((k: { id: string }) => k.id === inB.id));
    assert.ok(listPartner.data.every((k: { orgId: string }) => k.orgId === orgA.id || k.orgId === orgB.id));
    const filtered = (await call('partner')({ method: 'GET', url: `/api/v1/api-keys?orgId=${orgB.id}` })).json();
    assert.ok(filtered.data.every((k: { orgId: string }) => k.orgId === orgB.id));
    const outOfReach = (await call('partner')({ method: 'GET', url: `/api/v1/api-keys?orgId=${foreign.id}` })).json();
    assert.deepEqual(outOfReach, { data: [], pagination: { page: 1, limit: 50, total: 0, totalPages: 0 } });
    assert.ok((await call('system')({ method: 'GET', url: `/api/v1/api-keys?orgId=${foreign.id}` })).json().data.some((k: { id: string }) => k.id === inForeign.id));
    assertProblem(await call('partner')({ method: 'GET', url: '/api/v1/api-keys?orgId=nope' }), 400, 'VALIDATION_FAILED');
    assertProblem(await call('partner')({ method: 'GET', url: '/api/v1/api-keys?status=lost' }), 400, 'VALIDATION_FAILED');
    const paged = (await call('partner')({ method: 'GET', url: '/api/v1/api-keys?limit=1&page=0' })).json();
    assert.equal(paged.data.length, 1);
    assert.deepEqual([paged.pagination.page, paged.pagination.limit], [1, 1]);
    assert.equal(paged.pagination.totalPages, paged.pagination.total);
  });

  it('updates name, scopes (replacing them) and rate limit of active keys only', async () => {
    const key = (await create('orgAdminA', { orgId: orgA.id, name: 'before', scopes: ['devices:read', 'audit:read'] })).json();
    const url = `/api/v1/api-keys/${key.id}`;
    const res = await call('orgAdminA')({ method: 'PATCH', url, payload: { name: 'after', scopes: ['audit:read', 'audit:export'], rateLimit: 42 } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([res.json().name, res.json().scopes, res.json().rateLimit, res.json().keyPrefix], ['after', ['audit:read', 'audit:export'], 42, key.keyPrefix]);
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url, payload: {} }), 400, 'EMPTY_UPDATE');
    for (const payload of [{ rateLimit: 0 }, { name: '' }, { scopes: ['nope'] }, { expiresAt: null }, { orgId: orgB.id }]) {
      assertProblem(await call('orgAdminA')({ method: 'PATCH', url, payload }), 400, 'VALIDATION_FAILED');
    }
    const revoked = await call('orgAdminA')({ method: 'DELETE', url });
    assert.equal(revoked.statusCode, 200);
    assert.deepEqual([revoked.json().id, revoked.json().status, revoked.json().name], [key.id, 'revoked', 'after']);
    assertProblem(await call('orgAdminA')({ method: 'PATCH', url, payload: { name: 'again' } }), 409, 'API_KEY_NOT_ACTIVE');
    assertProblem(await call('orgAdminA')({ method: 'POST', url: `${url}/rotate` }), 409, 'API_KEY_NOT_ACTIVE');
    assertProblem(await call('orgAdminA')({ method: 'DELETE', url }), 409, 'API_KEY_NOT_ACTIVE');
    assert.equal((await call('orgAdminA')({ method: 'GET', url })).json().status, 'revoked', 'the record remains');
    const inactive = assertProblem(await withKey(key.key), 401, 'API_KEY_INACTIVE');
    assert.equal(inactive.detail, 'key no longer active; create a new key or rotate an active one');
  });

  it('rotates: new material, the old key dead at once, usage reset, everything else kept', async () => {
    const key = (await create('orgAdminA', { orgId: orgA.id, name: 'rotating', scopes: ['audit:read'], rateLimit: 77 })).json();
    for (let i = 0; i < 3; i++) assert.equal((await withKey(key.key)).statusCode, 200);
    await t.app.apiKeyUsage.flush();
    const used = (await call('orgAdminA')({ method: 'GET', url: `/api/v1/api-keys/${key.id}` })).json();
    assert.equal(used.usageCount, 3);
    assert.ok(used.lastUsedAt);
    const res = await call('orgAdminA')({ method: 'POST', url: `/api/v1/api-keys/${key.id}/rotate`, headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json();
    assert.notEqual(rotated.key, key.key);
    assert.equal(rotated.keyPrefix, rotated.key.slice(0, 12));
    assert.deepEqual(
      [rotated.id, rotated.name, rotated.scopes, rotated.rateLimit, rotated.status, rotated.usageCount, rotated.lastUsedAt, rotated.createdAt],
      [key.id, 'rotating', ['audit:read'], 77, 'active', 0, null, key.createdAt],
    );
    assert.match(rotated.warning, /only once/);
    assertProblem(await withKey(key.key), 401, 'API_KEY_INVALID');
    assert.equal((await withKey(rotated.key)).statusCode, 200);
  });

  it('audits create, update, rotate and revoke with actor, IP, user agent and details', async () => {
    const headers = { 'user-agent': 'key-admin/1.0' };
    const key = (await call('orgAdminB')({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { orgId: orgB.id, name: 'audited', scopes: ['devices:read'] } })).json();
    await call('orgAdminB')({ method: 'PATCH', url: `/api/v1/api-keys/${key.id}`, headers, payload: { scopes: ['audit:read'], rateLimit: 10 } });
    await call('orgAdminB')({ method: 'POST', url: `/api/v1/api-keys/${key.id}/rotate`, headers });
    await call('orgAdminB')({ method: 'DELETE', url: `/api/v1/api-keys/${key.id}`, headers });
    const entries = (await call('orgAdminB')({ method: 'GET', url: '/api/v1/audit-logs/logs?action=api_key&limit=100' })).json().data
      .filter((e: { resourceId: string }) => e.resourceId === key.id)
      .reverse();
    assert.deepEqual(entries.map((e: { action: string }) => e.action), ['api_key.create', 'api_key.update', 'api_key.rotate', 'api_key.revoke']);
    for (const e of entries) {
      assert.deepEqual([e.orgId, e.actorType, e.userAgent, e.resourceType, e.result], [orgB.id, 'user', 'key-admin/1.0', 'api_key', 'success']);
      assert.match(e.actorEmail, /@example\.test$/);
      assert.ok(e.ipAddress);
      assert.equal(JSON.stringify(e).includes(key.key), false, 'no key material in the audit trail');
    }
    assert.deepEqual(entries[0].details.scopes, ['devices:read']);
    assert.deepEqual(entries[1].details.changedFields, ['scopes', 'rateLimit']);
    assert.deepEqual(entries[1].details.scopeChanges, { added: ['audit:read'], removed: ['devices:read'] });
    assert.deepEqual([entries[1].details.before.rateLimit, entries[1].details.after.rateLimit], [1000, 10]);
    assert.equal(entries[2].details.usageCountBefore, 0);
    assert.equal(entries[2].details.previousKeyPrefix, key.keyPrefix);
    assert.equal(typeof entries[3].details.usageCount, 'number');
  });
});
