// Tenant isolation: two partners, each with organizations, sites, users of every scope and role
// and audit entries. Every read and write of one tenant's resources by the other tenant's users,
// by id and through every list, is refused (403/404) or returns nothing, and nothing changes.
// Later modules add their resources to `foreignTargets` and `lists` below.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createOrg, createPartner, createSite, createUser, type TestUser } from '../../test/support/factory.js';
import { as, login, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';

interface Tenant {
  partnerId: string;
  orgIds: string[];
  siteIds: string[];
  users: Record<string, TestUser>;
  sessions: Record<string, Session>;
  auditIds: string[];
  apiKeyIds: string[];
  /** An API key of the tenant's first organization holding every scope. */
  apiKey: string;
  device: { id: string; agentId: string; authToken: string };
  enrollmentKeyIds: string[];
}

const ROLES = ['admin', 'technician', 'readonly'] as const;

async function buildTenant(t: TestApp): Promise<Tenant> {
  const partner = await createPartner(t.db);
  const orgs = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
  const sites = [await createSite(t.db, orgs[0]!.id), await createSite(t.db, orgs[1]!.id)];
  const users: Record<string, TestUser> = {};
  for (const role of ROLES) {
    users[`partner-${role}`] = await createUser(t.db, { scope: 'partner', partnerId: partner.id, role });
    users[`org-${role}`] = await createUser(t.db, { scope: 'organization', orgId: orgs[0]!.id, role });
  }
  const sessions: Record<string, Session> = {};
  for (const [name, user] of Object.entries(users)) sessions[name] = await login(t.app, user);
  // Something of this tenant's in the audit log: a user changed by its own admin.
  await as(t.app, sessions['org-admin']!)({ method: 'PATCH', url: `/api/v1/users/${users['org-readonly']!.id}`, payload: { name: 'Renamed by own admin' } });
  await t.app.auditSealer.sealNow();
  const logs = (await as(t.app, sessions['partner-admin']!)({ method: 'GET', url: '/api/v1/audit-logs/logs?limit=100' })).json().data as { id: string }[];
  const keys = [await createApiKey(t.db, orgs[0]!.id, { scopes: ['*'] }), await createApiKey(t.db, orgs[1]!.id)];
  const device = await createDevice(t.db, orgs[0]!.id, { siteId: sites[0]!.id });
  const enrollmentKeyIds = await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into enrollment_keys (org_id, name, key_hash, expires_at) values ($1, 'iso', $2, now() + interval '1 hour') returning id`,
      [orgs[0]!.id, randomBytes(32).toString('hex')],
    );
    return rows.map((r) => r.id);
  });
  return {
    device,
    enrollmentKeyIds,
    partnerId: partner.id,
    orgIds: orgs.map((o) => o.id),
    siteIds: sites.map((s) => s.id),
    users,
    sessions,
    auditIds: logs.map((l) => l.id),
    apiKeyIds: keys.map((k) => k.id),
    apiKey: keys[0]!.key,
  };
}

describe('tenant isolation', () => {
  let t: TestApp;
  let one: Tenant;
  let two: Tenant;
  before(async () => {
    t = await testApp();
    one = await buildTenant(t);
    two = await buildTenant(t);
  });
  after(() => t.close());

  /** Requests against the other tenant's resources by id; each must be refused. */
  function foreignTargets(victim: Tenant): InjectOptions[] {
    const org = victim.orgIds[0]!;
    const site = victim.siteIds[0]!;
    const user = victim.users['org-admin']!.id;
    const suffix = randomBytes(3).toString('hex');
    return [
      { method: 'GET', url: `/api/v1/orgs/partners/${victim.partnerId}` },
      { method: 'PATCH', url: `/api/v1/orgs/partners/${victim.partnerId}`, payload: { name: 'hijacked' } },
      { method: 'DELETE', url: `/api/v1/orgs/partners/${victim.partnerId}` },
      { method: 'GET', url: `/api/v1/orgs/organizations/${org}` },
      { method: 'PATCH', url: `/api/v1/orgs/organizations/${org}`, payload: { name: 'hijacked' } },
      { method: 'DELETE', url: `/api/v1/orgs/organizations/${org}` },
      { method: 'POST', url: '/api/v1/orgs/organizations', payload: { partnerId: victim.partnerId, name: 'planted', slug: `planted-${suffix}` } },
      { method: 'GET', url: `/api/v1/orgs/sites/${site}` },
      { method: 'PATCH', url: `/api/v1/orgs/sites/${site}`, payload: { name: 'hijacked' } },
      { method: 'DELETE', url: `/api/v1/orgs/sites/${site}` },
      { method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: org, name: 'planted' } },
      { method: 'GET', url: `/api/v1/users/${user}` },
      { method: 'PATCH', url: `/api/v1/users/${user}`, payload: { name: 'hijacked' } },
      { method: 'DELETE', url: `/api/v1/users/${user}` },
      { method: 'POST', url: '/api/v1/users', payload: { email: `planted-${suffix}@x.test`, name: 'planted', password: 'long-enough-pw', scope: 'organization', orgId: org, role: 'admin' } },
      { method: 'GET', url: `/api/v1/audit-logs/logs/${victim.auditIds[0]}` },
      { method: 'GET', url: `/api/v1/audit-logs/verify?orgId=${org}` },
      { method: 'GET', url: `/api/v1/api-keys/${victim.apiKeyIds[0]}` },
      { method: 'PATCH', url: `/api/v1/api-keys/${victim.apiKeyIds[0]}`, payload: { name: 'hijacked' } },
      { method: 'POST', url: `/api/v1/api-keys/${victim.apiKeyIds[0]}/rotate` },
      { method: 'DELETE', url: `/api/v1/api-keys/${victim.apiKeyIds[0]}` },
      { method: 'POST', url: '/api/v1/api-keys', payload: { orgId: org, name: 'planted' } },
      { method: 'GET', url: `/api/v1/devices/${victim.device.id}` },
      { method: 'GET', url: `/api/v1/devices/${victim.device.id}/diagnostic-logs` },
      { method: 'GET', url: `/api/v1/devices/${victim.device.id}/eventlogs` },
      { method: 'PATCH', url: `/api/v1/devices/${victim.device.id}`, payload: { siteId: site } },
      { method: 'DELETE', url: `/api/v1/devices/${victim.device.id}` },
      { method: 'GET', url: `/api/v1/enrollment-keys/${victim.enrollmentKeyIds[0]}` },
      { method: 'POST', url: `/api/v1/enrollment-keys/${victim.enrollmentKeyIds[0]}/rotate` },
      { method: 'DELETE', url: `/api/v1/enrollment-keys/${victim.enrollmentKeyIds[0]}` },
      { method: 'POST', url: '/api/v1/enrollment-keys', payload: { orgId: org, name: 'planted' } },
    ];
  }

  /** Lists that must not contain any of the other tenant's ids. */
  const lists = (victim: Tenant) => [
    { url: '/api/v1/orgs/', ids: victim.orgIds },
    { url: '/api/v1/orgs/organizations?limit=100', ids: victim.orgIds },
    { url: `/api/v1/orgs/organizations?limit=100&partnerId=${victim.partnerId}`, ids: victim.orgIds },
    { url: '/api/v1/orgs/sites?limit=100', ids: victim.siteIds },
    { url: `/api/v1/orgs/sites?limit=100&orgId=${victim.orgIds[0]}`, ids: victim.siteIds },
    { url: '/api/v1/users?limit=100', ids: Object.values(victim.users).map((u) => u.id) },
    { url: `/api/v1/users?limit=100&orgId=${victim.orgIds[0]}`, ids: Object.values(victim.users).map((u) => u.id) },
    { url: '/api/v1/audit-logs/logs?limit=100', ids: victim.auditIds },
    { url: `/api/v1/audit-logs/logs?limit=100&orgId=${victim.orgIds[0]}`, ids: victim.auditIds },
    { url: `/api/v1/audit-logs/search?limit=100&q=renamed`, ids: victim.auditIds },
    { url: '/api/v1/api-keys?limit=100', ids: victim.apiKeyIds },
    { url: `/api/v1/api-keys?limit=100&orgId=${victim.orgIds[0]}`, ids: victim.apiKeyIds },
    { url: '/api/v1/devices?limit=100', ids: [victim.device.id] },
    { url: `/api/v1/devices?limit=100&orgId=${victim.orgIds[0]}`, ids: [victim.device.id] },
    { url: '/api/v1/enrollment-keys?limit=100', ids: victim.enrollmentKeyIds },
    { url: `/api/v1/enrollment-keys?limit=100&orgId=${victim.orgIds[0]}`, ids: victim.enrollmentKeyIds },
  ];

  for (const [attackerName, victimName] of [['one', 'two'], ['two', 'one']] as const) {
    it(`refuses tenant ${attackerName}'s users everything of tenant ${victimName}, for every scope and role`, async () => {
      const attacker = attackerName === 'one' ? one : two;
      const victim = victimName === 'one' ? one : two;
      // The lists are not empty by accident: the victim's own admin sees its data through them.
      assert.ok(victim.auditIds.length > 0);
      for (const list of lists(victim).filter((l) => !l.url.includes('search'))) {
        const own = (await as(t.app, victim.sessions['partner-admin']!)({ method: 'GET', url: list.url })).json() as { data: { id: string }[] };
        assert.ok(own.data.some((x) => list.ids.includes(x.id)), `the victim's own admin sees nothing through ${list.url}`);
      }
      for (const [who, session] of Object.entries(attacker.sessions)) {
        for (const request of foreignTargets(victim)) {
          const res = await as(t.app, session)(request);
          assert.ok([403, 404].includes(res.statusCode), `${who} ${request.method} ${request.url}: ${res.statusCode} ${res.body}`);
        }
        for (const list of lists(victim)) {
          const res = await as(t.app, session)({ method: 'GET', url: list.url });
          if (res.statusCode !== 200) {
            assert.equal(res.statusCode, 403, `${who} ${list.url}: ${res.statusCode}`);
            continue;
          }
          const body = res.json() as { data?: { id: string }[]; entries?: { id: string }[] };
          const seen = (body.data ?? body.entries ?? []).map((x) => x.id);
          const leaked = seen.filter((id) => list.ids.includes(id));
          assert.deepEqual(leaked, [], `${who} saw the other tenant's ids through ${list.url}`);
        }
      }
      // The attacker's API key (every scope) gets nothing of the victim's either.
      const withKey = (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': attacker.apiKey } });
      const keyRoutes = (url: string) => url.includes('/audit-logs/') || url.includes('/devices');
      for (const request of foreignTargets(victim).filter((r) => keyRoutes(String(r.url)))) {
        const res = await t.app.inject({ ...request, headers: { 'x-api-key': attacker.apiKey } });
        assert.ok([403, 404].includes(res.statusCode), `API key ${request.method} ${request.url}: ${res.statusCode} ${res.body}`);
      }
      for (const list of lists(victim).filter((l) => keyRoutes(l.url))) {
        const res = await withKey(list.url);
        assert.equal(res.statusCode, 200, `API key ${list.url}: ${res.body}`);
        const leaked = (res.json() as { data: { id: string }[] }).data.filter((x) => list.ids.includes(x.id));
        assert.deepEqual(leaked, [], `the attacker's API key saw the other tenant's ids through ${list.url}`);
      }
      // The attacker's agent token does not speak for the victim's device.
      const hijack = await t.app.inject({ method: 'POST', url: `/api/v1/agents/${victim.device.agentId}/heartbeat`, headers: { authorization: `Bearer ${attacker.device.authToken}` }, payload: {} });
      assert.equal(hijack.statusCode, 401);
      // Nothing of the victim's changed.
      const system = await login(t.app, await createUser(t.db, { scope: 'system' }));
      const org = (await as(t.app, system)({ method: 'GET', url: `/api/v1/orgs/organizations/${victim.orgIds[0]}` })).json();
      assert.notEqual(org.name, 'hijacked');
      const site = (await as(t.app, system)({ method: 'GET', url: `/api/v1/orgs/sites/${victim.siteIds[0]}` })).json();
      assert.notEqual(site.name, 'hijacked');
      const partner = (await as(t.app, system)({ method: 'GET', url: `/api/v1/orgs/partners/${victim.partnerId}` })).json();
      assert.equal(partner.deletedAt, null);
      const device = (await as(t.app, system)({ method: 'GET', url: `/api/v1/devices/${victim.device.id}` })).json();
      assert.deepEqual([device.siteId, device.lastSeenAt], [victim.siteIds[0], null]);
      assert.equal((await as(t.app, system)({ method: 'GET', url: `/api/v1/enrollment-keys/${victim.enrollmentKeyIds[0]}` })).statusCode, 200);
      const key = (await as(t.app, system)({ method: 'GET', url: `/api/v1/api-keys/${victim.apiKeyIds[0]}` })).json();
      assert.deepEqual([key.name.startsWith('Key '), key.status], [true, 'active']);
      const user = (await as(t.app, system)({ method: 'GET', url: `/api/v1/users/${victim.users['org-admin']!.id}` }));
      assert.equal(user.statusCode, 200);
      assert.notEqual(user.json().name, 'hijacked');
    });
  }
});
