// GET /devices?search= through HTTP on both databases (API.md §4): a literal, case-insensitive
// substring of the hostname (`%`, `_` and `\` match themselves), ANDed with orgId, siteId and
// status, with totals counted (never the kept per-organization counts) and skipCount honoured, and
// never a device of an organization out of the caller's reach.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createOrg, createPartner, createSite, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';

interface Listed {
  data: { id: string; hostname: string }[];
  pagination: { page: number; limit: number; total: number | null; totalPages: number | null };
}

for (const backend of backends()) {
  describe(`device search on ${backend}`, () => {
    let t: TestApp;
    let orgA: TestOrg;
    let orgB: TestOrg;
    let siteA1: string;
    let siteA2: string;
    let readKeyA: string;
    const s: Record<string, Session> = {};
    // Every hostname here starts with the token, so a system-scope search (which reaches every
    // tenant of the run's shared database) finds these devices only.
    const tok = `s${randomBytes(4).toString('hex')}`;
    const host = {
      web01: `${tok}-Web_01`,
      webX01: `${tok}-webX01`,
      percent: `${tok}-db-100%`,
      backslash: `${tok}-back\\slash`,
      web02: `${tok}-web_02`,
      web03: `${tok}-WEB_03`,
      foreign: `${tok}-web_99`,
    };

    const list = async (who: string, query: Record<string, string>): Promise<Listed> => {
      const res = await as(t.app, s[who]!)({ method: 'GET', url: `/api/v1/devices?${new URLSearchParams(query)}` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Listed;
    };
    const hostnames = async (who: string, query: Record<string, string>) => (await list(who, { limit: '100', ...query })).data.map((d) => d.hostname).sort();

    before(async () => {
      t = await testApp({ backend });
      const partner = await createPartner(t.db);
      orgA = await createOrg(t.db, partner.id);
      orgB = await createOrg(t.db, partner.id);
      const foreign = await createOrg(t.db, (await createPartner(t.db)).id);
      siteA1 = (await createSite(t.db, orgA.id)).id;
      siteA2 = (await createSite(t.db, orgA.id)).id;
      for (const name of [host.web01, host.webX01, host.percent, host.backslash]) await createDevice(t.db, orgA.id, { siteId: siteA1, hostname: name });
      const online = await createDevice(t.db, orgA.id, { siteId: siteA2, hostname: host.web02 });
      await createDevice(t.db, orgB.id, { hostname: host.web03 });
      await createDevice(t.db, foreign.id, { hostname: host.foreign });
      // A decommissioned device that matches: it leaves every list, searched or not.
      const gone = await createDevice(t.db, orgA.id, { siteId: siteA1, hostname: `${tok}-web_gone` });
      await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
        await tx.query(`update devices set last_seen_at = $2 where id = $1`, [online.id, new Date(t.clock.now())]);
        await tx.query(`update devices set decommissioned_at = $2 where id = $1`, [gone.id, new Date(t.clock.now())]);
      });
      readKeyA = (await createApiKey(t.db, orgA.id, { scopes: ['devices:read'] })).key;
      const users = {
        system: await createUser(t.db, { scope: 'system' }),
        partner: await createUser(t.db, { scope: 'partner', partnerId: partner.id }),
        orgReadonlyA: await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' }),
        foreignPartner: await createUser(t.db, { scope: 'partner', partnerId: foreign.partnerId }),
      };
      for (const [k, user] of Object.entries(users)) s[k] = await login(t.app, user);
    });
    after(() => t?.close());

    it('matches a case-insensitive substring of the hostname', async () => {
      assert.deepEqual(await hostnames('partner', { search: 'WEB' }), [host.web01, host.web03, host.web02, host.webX01].sort());
      assert.deepEqual(await hostnames('partner', { search: 'b-100' }), [host.percent]);
      assert.deepEqual(await hostnames('partner', { search: `${tok.toUpperCase()}-WEBX0` }), [host.webX01]);
      assert.deepEqual(await hostnames('partner', { search: 'no-such-host' }), []);
    });

    it('matches %, _ and \\ literally', async () => {
      assert.deepEqual(await hostnames('partner', { search: 'web_' }), [host.web01, host.web03, host.web02].sort(), '_ is not a wildcard: webX01 stays out');
      assert.deepEqual(await hostnames('partner', { search: '%' }), [host.percent], '% matches only hostnames that contain it');
      assert.deepEqual(await hostnames('partner', { search: '100%' }), [host.percent]);
      assert.deepEqual(await hostnames('partner', { search: '\\' }), [host.backslash]);
      assert.deepEqual(await hostnames('partner', { search: 'k\\s' }), [host.backslash]);
      assert.deepEqual(await hostnames('partner', { search: '_%' }), []);
    });

    it('combines with orgId, siteId and status by AND', async () => {
      assert.deepEqual(await hostnames('partner', { search: 'web_', orgId: orgA.id }), [host.web01, host.web02].sort());
      assert.deepEqual(await hostnames('partner', { search: 'web_', orgId: orgB.id }), [host.web03]);
      assert.deepEqual(await hostnames('partner', { search: 'web', siteId: siteA1 }), [host.web01, host.webX01].sort());
      assert.deepEqual(await hostnames('partner', { search: 'web', siteId: siteA2 }), [host.web02]);
      assert.deepEqual(await hostnames('partner', { search: 'web', status: 'online' }), [host.web02]);
      assert.deepEqual(await hostnames('partner', { search: 'web', status: 'offline' }), [host.web01, host.web03, host.webX01].sort());
      assert.deepEqual(await hostnames('partner', { search: 'web', orgId: orgA.id, siteId: siteA1, status: 'offline' }), [host.web01, host.webX01].sort());
      assert.deepEqual(await hostnames('partner', { search: '%', siteId: siteA2 }), []);
    });

    it('counts the matches, not the organizations’ devices, and honours skipCount', async () => {
      // Without a filter the total is the kept count of every live device of the partner's organizations (6).
      assert.equal((await list('partner', { limit: '1' })).pagination.total, 6);
      assert.equal((await list('partner', { limit: '1', orgId: orgA.id })).pagination.total, 5);
      const first = await list('partner', { search: 'web', limit: '3' });
      assert.deepEqual(first.pagination, { page: 1, limit: 3, total: 4, totalPages: 2 });
      assert.equal(first.data.length, 3);
      const second = await list('partner', { search: 'web', limit: '3', page: '2' });
      assert.deepEqual(second.pagination, { page: 2, limit: 3, total: 4, totalPages: 2 });
      assert.deepEqual([...first.data, ...second.data].map((d) => d.hostname).sort(), [host.web01, host.web03, host.web02, host.webX01].sort());
      assert.deepEqual((await list('partner', { search: 'web', orgId: orgA.id, limit: '1' })).pagination, { page: 1, limit: 1, total: 3, totalPages: 3 });
      assert.deepEqual((await list('partner', { search: 'nothing-matches', limit: '10' })).pagination, { page: 1, limit: 10, total: 0, totalPages: 0 });
      const uncounted = await list('partner', { search: 'web', limit: '3', skipCount: 'true' });
      assert.deepEqual(uncounted.pagination, { page: 1, limit: 3, total: null, totalPages: null });
      assert.deepEqual(uncounted.data.map((d) => d.id), first.data.map((d) => d.id), 'the same page, newest first');
      const uncountedOrg = await list('partner', { search: 'web', orgId: orgA.id, skipCount: 'true' });
      assert.deepEqual([uncountedOrg.pagination.total, uncountedOrg.pagination.totalPages, uncountedOrg.data.length], [null, null, 3]);
    });

    it('never returns another tenant’s devices', async () => {
      const mine = [host.web01, host.webX01, host.percent, host.backslash, host.web02];
      assert.deepEqual(await hostnames('orgReadonlyA', { search: tok }), mine.sort());
      assert.deepEqual(await hostnames('orgReadonlyA', { search: tok, orgId: orgB.id }), []);
      assert.equal((await list('orgReadonlyA', { search: tok, orgId: orgB.id })).pagination.total, 0);
      assert.deepEqual(await hostnames('foreignPartner', { search: tok }), [host.foreign]);
      assert.deepEqual(await hostnames('foreignPartner', { search: 'web_', orgId: orgA.id }), []);
      const withKey = await t.app.inject({ method: 'GET', url: `/api/v1/devices?limit=100&search=${encodeURIComponent(tok)}`, headers: { 'x-api-key': readKeyA } });
      assert.equal(withKey.statusCode, 200, withKey.body);
      assert.deepEqual((withKey.json() as Listed).data.map((d) => d.hostname).sort(), mine.sort());
      // System scope reaches every tenant: all the token's devices, the decommissioned one excepted.
      const everywhere = await list('system', { search: `${tok}-web_`, limit: '100' });
      assert.deepEqual(everywhere.data.map((d) => d.hostname).sort(), [host.web01, host.web03, host.web02, host.foreign].sort());
      assert.equal(everywhere.pagination.total, 4);
    });

    it('counts an empty search as absent and refuses one over 255 characters', async () => {
      assert.deepEqual((await list('partner', { search: '', limit: '1' })).pagination.total, 6);
      assert.deepEqual(await hostnames('partner', { search: 'x'.repeat(255) }), []);
      const long = await as(t.app, s.partner!)({ method: 'GET', url: `/api/v1/devices?search=${'x'.repeat(256)}` });
      assertProblem(long, 400, 'VALIDATION_FAILED');
      assertProblem(await as(t.app, s.partner!)({ method: 'GET', url: `/api/v1/devices?search=a%00b` }), 400, 'VALIDATION_FAILED');
    });
  });
}
