// X-API-Key authentication through HTTP, with the in-process and the Redis rate-limit store:
// SPEC's check order and failures, scopes, the sliding window and its headers, exact usage, lazy
// expiry, the partner guard, and (with Redis) revocation seen at once by a second instance.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testApp, testRedisUrl, type TestApp } from '../../test/support/app.js';
import { createApiKey, createOrg, createPartner, createUser, type TestOrg, type TestPartner } from '../../test/support/factory.js';
import { as, assertProblem, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { applyUsageBatch, deploymentId } from './api-keys.repo.js';
import { createRedisRateLimitStore, USAGE_BATCH_LEASE_MS } from './rate-limiter.js';

const HOUR = 3_600_000;
const redisUrl = await testRedisUrl();
const stores: { name: string; env: Record<string, string> }[] = [{ name: 'in-process', env: {} }, ...(redisUrl ? [{ name: 'Redis', env: { REDIS_URL: redisUrl } }] : [])];

for (const store of stores) {
  describe(`API key authentication (${store.name} rate-limit store)`, () => {
    let t: TestApp;
    let partner: TestPartner;
    let org: TestOrg;
    let other: TestOrg;
    let admin: Session;
    let system: Session;
    const get = (key: string | string[], url = '/api/v1/auth/api-key', headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url, headers: { ...headers, 'x-api-key': key as string } });

    before(async () => {
      t = await testApp({ env: store.env });
      partner = await createPartner(t.db);
      org = await createOrg(t.db, partner.id);
      other = await createOrg(t.db, partner.id);
      admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
      system = await login(t.app, await createUser(t.db, { scope: 'system' }));
    });
    after(() => t.close());

    it('refuses anything in X-API-Key that is not an active key with 401', async () => {
      const { key } = await createApiKey(t.db, org.id);
      const invalid = [`x${key}`, key.replace('svc_', 'sk_'), key.slice(0, -1), `${key} `, `${key}x`, `${key}\t`, 'svc_', '', `${key}, ${key}`, 'svc_\u00ff\u00fe'.padEnd(36, '\u00e9')];
      for (const value of invalid) assertProblem(await get(value), 401, 'API_KEY_INVALID');
      assertProblem(await get([key, key]), 401, 'API_KEY_INVALID');
      const unknown = `svc_${'A'.repeat(32)}`;
      assert.equal(assertProblem(await get(unknown), 401, 'API_KEY_INVALID').detail, 'API key is not valid');
      assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/auth/api-key' }), 401, 'UNAUTHENTICATED');
      const revoked = await createApiKey(t.db, org.id, { status: 'revoked' });
      assertProblem(await get(revoked.key), 401, 'API_KEY_INACTIVE');
      assert.equal((await get(key)).statusCode, 200);
    });

    it('lets the key win over a JWT, and is no credential on JWT-only routes', async () => {
      const { key } = await createApiKey(t.db, org.id, { scopes: ['audit:read'] });
      const bearer = { authorization: `Bearer ${system.accessToken}` };
      assertProblem(await get(`svc_${'B'.repeat(32)}`, '/api/v1/audit-logs/logs', bearer), 401, 'API_KEY_INVALID');
      const asKey = await get(key, '/api/v1/audit-logs/logs?limit=100', bearer);
      assert.equal(asKey.statusCode, 200);
      assert.ok(asKey.json().data.every((e: { orgId: string }) => e.orgId === org.id), 'the key reads its own organization only');
      assertProblem(await get(key, '/api/v1/api-keys'), 401, 'UNAUTHENTICATED');
      assertProblem(await get(key, '/api/v1/orgs/sites'), 401, 'UNAUTHENTICATED');
    });

    it('admits a key holding any one required scope or *, and nothing else', async () => {
      const route = '/api/v1/audit-logs/logs';
      for (const scopes of [['audit:read'], ['devices:read', 'audit:read'], ['*']]) {
        assert.equal((await get((await createApiKey(t.db, org.id, { scopes })).key, route)).statusCode, 200, JSON.stringify(scopes));
      }
      for (const scopes of [[], ['devices:read'], ['audit:export']]) {
        const res = await get((await createApiKey(t.db, org.id, { scopes })).key, route);
        assert.equal(assertProblem(res, 403, 'API_KEY_SCOPE_DENIED').detail, 'API key does not have required permissions');
        assert.equal(res.headers['x-ratelimit-remaining'], '1000', 'a refused request takes nothing from the window');
      }
      const empty = await createApiKey(t.db, org.id, { scopes: [] });
      const me = await get(empty.key);
      assert.equal(me.statusCode, 200, 'a route that is not scope-protected admits a key without scopes');
      assert.deepEqual(me.json(), { id: empty.id, orgId: org.id, name: me.json().name, scopes: [] });
    });

    it('applies a changed rate limit on the next request', async () => {
      const created = await as(t.app, admin)({ method: 'POST', url: '/api/v1/api-keys', payload: { orgId: org.id, name: 'tight', rateLimit: 2 } });
      const { id, key } = created.json();
      await get(key);
      await get(key);
      assertProblem(await get(key), 429, 'RATE_LIMITED');
      const patched = await as(t.app, admin)({ method: 'PATCH', url: `/api/v1/api-keys/${id}`, payload: { rateLimit: 5 } });
      assert.equal(patched.statusCode, 200);
      const next = await get(key);
      assert.equal(next.statusCode, 200);
      assert.deepEqual([next.headers['x-ratelimit-limit'], next.headers['x-ratelimit-remaining']], ['5', '2']);
      await as(t.app, admin)({ method: 'PATCH', url: `/api/v1/api-keys/${id}`, payload: { rateLimit: 1 } });
      const lowered = assertProblem(await get(key), 429, 'RATE_LIMITED');
      assert.ok(lowered);
    });

    it('counts usage exactly under concurrency', async () => {
      const { id, key } = await createApiKey(t.db, org.id, { rateLimit: 150 });
      const results = await Promise.all(Array.from({ length: 200 }, () => get(key)));
      const admitted = results.filter((r) => r.statusCode === 200).length;
      assert.equal(admitted, 150);
      assert.equal(results.filter((r) => r.statusCode === 429).length, 50);
      await t.app.apiKeyUsage.flush();
      const stored = (await as(t.app, admin)({ method: 'GET', url: `/api/v1/api-keys/${id}` })).json();
      assert.equal(stored.usageCount, 150);
      assert.ok(Math.abs(Date.parse(stored.lastUsedAt) - t.clock.now()) < 60_000);
    });

    it('expires a key lazily on its first use after expiresAt', async () => {
      const created = await as(t.app, admin)({
        method: 'POST', url: '/api/v1/api-keys', payload: { orgId: org.id, name: 'short', expiresAt: new Date(t.clock.now() + 60_000).toISOString() },
      });
      const { id, key } = created.json();
      assert.equal((await get(key)).statusCode, 200);
      t.clock.advance(61_000);
      assertProblem(await get(key), 401, 'API_KEY_INACTIVE');
      const stored = (await as(t.app, admin)({ method: 'GET', url: `/api/v1/api-keys/${id}` })).json();
      assert.equal(stored.status, 'expired');
      assertProblem(await as(t.app, admin)({ method: 'POST', url: `/api/v1/api-keys/${id}/rotate` }), 409, 'API_KEY_NOT_ACTIVE');
      const listed = (await as(t.app, admin)({ method: 'GET', url: '/api/v1/api-keys?status=expired&limit=100' })).json();
      assert.ok(listed.data.some((k: { id: string }) => k.id === id));
    });

    it('applies the partner guard to the key’s partner, before the limiter', async () => {
      const ownPartner = await createPartner(t.db);
      const ownOrg = await createOrg(t.db, ownPartner.id);
      const { key } = await createApiKey(t.db, ownOrg.id);
      assert.equal((await get(key)).headers['x-ratelimit-remaining'], '999');
      const suspend = await as(t.app, system)({ method: 'PATCH', url: `/api/v1/orgs/partners/${ownPartner.id}`, payload: { status: 'suspended' } });
      assert.equal(suspend.statusCode, 200, suspend.body);
      const blocked = await get(key);
      assertProblem(blocked, 403, 'PARTNER_INACTIVE');
      assert.equal(blocked.headers['x-ratelimit-remaining'], '999');
    });

    it('keeps a key inside its organization: other organizations’ audit entries stay hidden', async () => {
      const { key } = await createApiKey(t.db, other.id, { scopes: ['audit:read'] });
      const res = await get(key, `/api/v1/audit-logs/logs?orgId=${org.id}`);
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().data.length, 0);
    });

    // Last: it moves the clock past every session's lifetime.
    it('limits over a sliding hour, with headers, Retry-After, and refused requests not counted', async () => {
      const { id, key } = await createApiKey(t.db, org.id, { rateLimit: 3 });
      const start = t.clock.now();
      const first = await get(key);
      assert.equal(first.statusCode, 200);
      assert.deepEqual([first.headers['x-ratelimit-limit'], first.headers['x-ratelimit-remaining']], ['3', '2']);
      const firstReset = Number(first.headers['x-ratelimit-reset']);
      assert.ok(Math.abs(firstReset - (start + HOUR) / 1000) <= 2, 'reset: when the oldest request leaves the window');
      t.clock.advance(10 * 60_000);
      assert.equal((await get(key)).headers['x-ratelimit-remaining'], '1');
      t.clock.advance(10 * 60_000);
      assert.equal((await get(key)).headers['x-ratelimit-remaining'], '0');
      for (let i = 0; i < 5; i++) {
        const refused = assertProblem(await get(key), 429, 'RATE_LIMITED');
        assert.match(String(refused.detail), /3 requests per hour/);
      }
      const refused = await get(key);
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(retryAfter > 39 * 60 && retryAfter <= 40 * 60 + 1, `Retry-After ${retryAfter}`);
      assert.deepEqual([refused.headers['x-ratelimit-limit'], refused.headers['x-ratelimit-remaining']], ['3', '0']);
      assert.equal(Number(refused.headers['x-ratelimit-reset']), firstReset);
      // Sliding, not a fixed bucket: an hour after the first request exactly one slot comes back.
      t.clock.advance(40 * 60_000 + 1000);
      assert.equal((await get(key)).statusCode, 200);
      assertProblem(await get(key), 429, 'RATE_LIMITED');
      await t.app.apiKeyUsage.flush();
      const stored = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query<{ n: number }>(`select usage_count::int as n from api_keys where id = $1`, [id]));
      assert.equal(stored.rows[0]!.n, 4, 'usage counts admitted requests only');
    });
  });
}

describe('API keys across two instances (Redis)', { skip: redisUrl === null ? 'Redis is not reachable' : false }, () => {
  let a: TestApp;
  let b: TestApp;
  let admin: Session;
  let org: TestOrg;
  const get = (t: TestApp, key: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/api-key', headers: { 'x-api-key': key } });

  before(async () => {
    a = await testApp({ env: { REDIS_URL: redisUrl! } });
    b = await testApp({ env: { REDIS_URL: redisUrl! }, db: a.db });
    org = await createOrg(a.db, (await createPartner(a.db)).id);
    admin = await loginWithMfa(a.app, await createUser(a.db, { scope: 'organization', orgId: org.id }), a.clock);
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  const create = async (payload: Record<string, unknown> = {}) =>
    (await as(a.app, admin)({ method: 'POST', url: '/api/v1/api-keys', payload: { orgId: org.id, name: 'shared', ...payload } })).json();

  it('refuses a key on the other instance on the very next request after revoke or rotate', async () => {
    const revoked = await create();
    assert.equal((await get(b, revoked.key)).statusCode, 200, 'B has the key cached');
    assert.equal((await as(a.app, admin)({ method: 'DELETE', url: `/api/v1/api-keys/${revoked.id}` })).statusCode, 200);
    assertProblem(await get(b, revoked.key), 401, 'API_KEY_INACTIVE');

    const rotated = await create();
    assert.equal((await get(b, rotated.key)).statusCode, 200);
    const fresh = (await as(a.app, admin)({ method: 'POST', url: `/api/v1/api-keys/${rotated.id}/rotate` })).json();
    assertProblem(await get(b, rotated.key), 401, 'API_KEY_INVALID');
    assert.equal((await get(b, fresh.key)).statusCode, 200);
  });

  it('shares one window and counts usage exactly across instances', async () => {
    const key = await create({ rateLimit: 40 });
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => get(i % 2 ? a : b, key.key)));
    assert.equal(results.filter((r) => r.statusCode === 200).length, 40);
    await Promise.all([a.app.apiKeyUsage.flush(), b.app.apiKeyUsage.flush()]);
    const stored = (await as(a.app, admin)({ method: 'GET', url: `/api/v1/api-keys/${key.id}` })).json();
    assert.equal(stored.usageCount, 40);
  });
  it('keeps usage exact when an instance dies mid-flush: what it claimed is added once, by another', async () => {
    const key = await create({ rateLimit: 100 });
    const usage = async () => (await as(a.app, admin)({ method: 'GET', url: `/api/v1/api-keys/${key.id}` })).json().usageCount as number;
    // A third instance, counted with the others in Redis, whose flushes are done by hand below (on
    // the clock of `a`, which its sign-in moved ahead of `b`'s).
    const { Redis } = await import('ioredis');
    const namespace = await withTenant(a.db, SYSTEM_SCOPE, deploymentId);
    const dying = createRedisRateLimitStore(new Redis(redisUrl!), () => {}, namespace);
    try {
      for (let i = 0; i < 7; i++) assert.equal((await get(a, key.key)).statusCode, 200);
      // It took the counts out of Redis and died before the database saw them.
      const lost = await dying.claimUsage!(a.clock.now());
      assert.ok(lost.some((batch) => batch.usage.some((u) => u.count === 7)));
      for (let i = 0; i < 4; i++) assert.equal((await get(b, key.key)).statusCode, 200);
      // It took these, added them, and died before forgetting them in Redis.
      const added = await dying.claimUsage!(a.clock.now());
      for (const batch of added) assert.equal(await withTenant(a.db, SYSTEM_SCOPE, (tx) => applyUsageBatch(tx, batch.id, batch.usage)), true);
      await Promise.all([a.app.apiKeyUsage.flush(), b.app.apiKeyUsage.flush()]);
      assert.equal(await usage(), 4, 'claims still held are left to their instance');
      // Once the claims run out, the next flush of a survivor takes both: adds the first, skips the second.
      a.clock.advance(USAGE_BATCH_LEASE_MS + 1000);
      await a.app.apiKeyUsage.flush();
      assert.equal(await usage(), 11);
      await a.app.apiKeyUsage.flush();
      assert.equal(await usage(), 11);
      assert.deepEqual(await dying.claimUsage!(a.clock.now() + 10 * USAGE_BATCH_LEASE_MS), [], 'nothing left behind in Redis');
    } finally {
      await dying.close();
    }
  });
});

describe('API keys when Redis is unreachable', { skip: redisUrl === null ? 'Redis is not reachable' : false }, () => {
  it('falls back to the in-process limiter: still limited, never a 500', async () => {
    const t = await testApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const org = await createOrg(t.db, (await createPartner(t.db)).id);
      const { key } = await createApiKey(t.db, org.id, { rateLimit: 2 });
      const codes = [];
      for (let i = 0; i < 3; i++) codes.push((await t.app.inject({ method: 'GET', url: '/api/v1/auth/api-key', headers: { 'x-api-key': key } })).statusCode);
      assert.deepEqual(codes, [200, 200, 429]);
    } finally {
      await t.close();
    }
  });
});
