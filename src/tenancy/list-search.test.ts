// GET /orgs/sites?search= and GET /orgs/organizations?search= through HTTP on both databases
// (API.md §4): a literal, case-insensitive substring of the name (`%`, `_` and `\` match
// themselves), ANDed with the other filters, in the list's own order (the partner's organization
// order included), with totals counted and skipCount honoured, never reaching past the caller.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg, type TestPartner } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';

interface Listed {
  data: { id: string; name: string }[];
  pagination: { page: number; limit: number; total: number | null; totalPages: number | null };
}

for (const backend of backends()) {
  describe(`site and organization search on ${backend}`, () => {
    let t: TestApp;
    let partner: TestPartner;
    let foreign: TestOrg;
    const s: Record<string, Session> = {};
    const call = (who: string) => as(t.app, s[who]!);
    // Every name starts with the token, so a system-scope search (which reaches every tenant of
    // the run's shared database) finds these rows only.
    const tok = `s${randomBytes(4).toString('hex')}`;
    const org = { alpha: `${tok} Alpha_1`, alphaX: `${tok} alphaX1`, beta: `${tok} Beta 100%`, gamma: `${tok} Gamma\\x`, foreign: `${tok} Alpha_1 foreign` };
    const orgIds: Record<keyof typeof org, string> = { alpha: '', alphaX: '', beta: '', gamma: '', foreign: '' };
    const site = { head: `${tok} Head_Office`, headX: `${tok} HeadXOffice`, lab: `${tok} 50% Lab`, slash: `${tok} back\\slash`, headB: `${tok} head_office 2`, foreign: `${tok} Head_Office foreign` };

    const list = async (who: string, path: 'sites' | 'organizations', query: Record<string, string>): Promise<Listed> => {
      const res = await call(who)({ method: 'GET', url: `/api/v1/orgs/${path}?${new URLSearchParams(query)}` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Listed;
    };
    const names = async (who: string, path: 'sites' | 'organizations', query: Record<string, string>) =>
      (await list(who, path, { limit: '100', ...query })).data.map((x) => x.name);
    // Sites are ordered by name in the database's collation, which may not sort case as JavaScript
    // does: lists of names that differ in case are compared as sets.
    const sorted = (values: string[]) => [...values].sort();
    const nameSet = async (who: string, path: 'sites' | 'organizations', query: Record<string, string>) => sorted(await names(who, path, query));
    const post = async (who: string, url: string, payload: Record<string, unknown>) => {
      const res = await call(who)({ method: 'POST', url, payload });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string };
    };

    before(async () => {
      t = await testApp({ backend });
      partner = await createPartner(t.db);
      const otherPartner = await createPartner(t.db);
      foreign = await createOrg(t.db, otherPartner.id);
      s.partner = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id }));
      s.foreignPartner = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: otherPartner.id }));
      s.system = await login(t.app, await createUser(t.db, { scope: 'system' }));
      for (const key of ['alpha', 'alphaX', 'beta', 'gamma'] as const) {
        orgIds[key] = (await post('partner', '/api/v1/orgs/organizations', { name: org[key], slug: `${key.toLowerCase()}-${tok}` })).id;
      }
      orgIds.foreign = (await post('foreignPartner', '/api/v1/orgs/organizations', { name: org.foreign, slug: `alpha-${tok}` })).id;
      for (const name of [site.head, site.headX, site.lab, site.slash]) await post('partner', '/api/v1/orgs/sites', { orgId: orgIds.alpha, name });
      await post('partner', '/api/v1/orgs/sites', { orgId: orgIds.beta, name: site.headB });
      await post('foreignPartner', '/api/v1/orgs/sites', { orgId: foreign.id, name: site.foreign });
      s.partnerSelected = await login(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'selected', orgIds: [orgIds.alpha] }));
      s.orgAdmin = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgIds.alpha }));
    });
    after(() => t?.close());

    describe('sites', () => {
      it('matches a case-insensitive substring of the name', async () => {
        assert.deepEqual(await nameSet('partner', 'sites', { search: 'HEAD' }), sorted([site.head, site.headX, site.headB]));
        assert.deepEqual(await names('partner', 'sites', { search: 'office 2' }), [site.headB]);
        assert.deepEqual(await names('partner', 'sites', { search: 'nowhere' }), []);
      });

      it('matches %, _ and \\ literally', async () => {
        assert.deepEqual(await nameSet('partner', 'sites', { search: 'head_' }), sorted([site.head, site.headB]), '_ is not a wildcard');
        assert.deepEqual(await names('partner', 'sites', { search: '%' }), [site.lab]);
        assert.deepEqual(await names('partner', 'sites', { search: '\\' }), [site.slash]);
        assert.deepEqual(await names('partner', 'sites', { search: '_%' }), []);
      });

      it('combines with orgId (or organizationId) by AND', async () => {
        assert.deepEqual(await nameSet('partner', 'sites', { search: 'head', orgId: orgIds.alpha }), sorted([site.head, site.headX]));
        assert.deepEqual(await names('partner', 'sites', { search: 'head', organizationId: orgIds.beta }), [site.headB]);
        assert.deepEqual(await names('partner', 'sites', { search: '%', orgId: orgIds.beta }), []);
      });

      it('counts the matches and honours skipCount, beside the cached unfiltered list', async () => {
        // The unfiltered lists first, so their pages sit in the cache when the same pages are searched.
        assert.equal((await list('partner', 'sites', { limit: '2' })).pagination.total, 5);
        assert.equal((await list('partner', 'sites', { limit: '1', orgId: orgIds.alpha })).pagination.total, 4);
        const first = await list('partner', 'sites', { search: 'head', limit: '2' });
        assert.deepEqual(first.pagination, { page: 1, limit: 2, total: 3, totalPages: 2 });
        const second = await list('partner', 'sites', { search: 'head', limit: '2', page: '2' });
        assert.deepEqual(second.pagination, { page: 2, limit: 2, total: 3, totalPages: 2 });
        assert.deepEqual(sorted([...first.data, ...second.data].map((x) => x.name)), sorted([site.head, site.headX, site.headB]));
        const uncounted = await list('partner', 'sites', { search: 'head', limit: '2', skipCount: 'true' });
        assert.deepEqual(uncounted.pagination, { page: 1, limit: 2, total: null, totalPages: null });
        assert.deepEqual(uncounted.data.map((x) => x.id), first.data.map((x) => x.id));
        assert.deepEqual((await list('partner', 'sites', { search: 'head', orgId: orgIds.alpha, limit: '1' })).pagination, { page: 1, limit: 1, total: 2, totalPages: 2 });
        assert.equal((await list('partner', 'sites', { limit: '1', orgId: orgIds.alpha })).pagination.total, 4, 'the unfiltered total is untouched');
        // A search reads the sites as they are now: a new match shows at once.
        const added = await post('partner', '/api/v1/orgs/sites', { orgId: orgIds.beta, name: `${tok} HEAD_quarters` });
        assert.equal((await list('partner', 'sites', { search: 'head_', limit: '1' })).pagination.total, 3);
        assert.deepEqual((await call('partner')({ method: 'DELETE', url: `/api/v1/orgs/sites/${added.id}` })).json(), { success: true });
      });

      it('never returns the sites of an organization out of reach', async () => {
        assert.deepEqual(await nameSet('orgAdmin', 'sites', { search: tok }), sorted([site.head, site.headX, site.lab, site.slash]));
        assert.deepEqual(await names('orgAdmin', 'sites', { search: tok, orgId: orgIds.beta }), []);
        assert.equal((await list('orgAdmin', 'sites', { search: tok, orgId: orgIds.beta })).pagination.total, 0);
        assert.deepEqual(await names('partnerSelected', 'sites', { search: 'head_' }), [site.head]);
        assert.deepEqual(await names('foreignPartner', 'sites', { search: tok }), [site.foreign]);
        assert.deepEqual(await names('foreignPartner', 'sites', { search: 'head', orgId: orgIds.alpha }), []);
        const everywhere = await list('system', 'sites', { search: `${tok} head_office`, limit: '100' });
        assert.deepEqual(sorted(everywhere.data.map((x) => x.name)), sorted([site.head, site.foreign, site.headB]));
        assert.equal(everywhere.pagination.total, 3);
      });

      it('counts an empty search as absent and refuses one over 255 characters', async () => {
        assert.equal((await list('partner', 'sites', { search: '', orgId: orgIds.alpha, limit: '1' })).pagination.total, 4);
        assert.deepEqual(await names('partner', 'sites', { search: 'x'.repeat(255) }), []);
        assertProblem(await call('partner')({ method: 'GET', url: `/api/v1/orgs/sites?search=${'x'.repeat(256)}` }), 400, 'VALIDATION_FAILED');
      });
    });

    describe('organizations', () => {
      before(async () => {
        // The partner's display order: gamma, alphaX, alpha; beta is missing from it (it follows).
        const res = await call('partner')({ method: 'PATCH', url: '/api/v1/orgs/organizations/order', payload: { organizationOrder: [orgIds.gamma, orgIds.alphaX, orgIds.alpha] } });
        assert.equal(res.statusCode, 200, res.body);
      });

      it('matches a case-insensitive substring of the name, in the partner’s order', async () => {
        assert.deepEqual(await names('partner', 'organizations', { search: 'ALPHA' }), [org.alphaX, org.alpha]);
        assert.deepEqual(await names('partner', 'organizations', { search: tok }), [org.gamma, org.alphaX, org.alpha, org.beta]);
        assert.deepEqual(await names('system', 'organizations', { search: 'a', partnerId: partner.id }), [org.gamma, org.alphaX, org.alpha, org.beta]);
        // Across partners (system scope without partnerId): by name.
        assert.deepEqual(await names('system', 'organizations', { search: `${tok} alpha_1` }), [org.alpha, org.foreign]);
      });

      it('matches %, _ and \\ literally', async () => {
        assert.deepEqual(await names('partner', 'organizations', { search: 'alpha_' }), [org.alpha], '_ is not a wildcard: alphaX1 stays out');
        assert.deepEqual(await names('partner', 'organizations', { search: '%' }), [org.beta]);
        assert.deepEqual(await names('partner', 'organizations', { search: '\\' }), [org.gamma]);
        assert.deepEqual(await names('partner', 'organizations', { search: '\\x' }), [org.gamma]);
      });

      it('combines with partnerId by AND, and counts the matches', async () => {
        assert.deepEqual(await names('system', 'organizations', { search: 'alpha_1', partnerId: partner.id }), [org.alpha]);
        assert.deepEqual(await names('partner', 'organizations', { search: tok, partnerId: foreign.partnerId }), []);
        const first = await list('partner', 'organizations', { search: tok, limit: '3' });
        assert.deepEqual(first.pagination, { page: 1, limit: 3, total: 4, totalPages: 2 });
        assert.deepEqual(first.data.map((x) => x.name), [org.gamma, org.alphaX, org.alpha]);
        const second = await list('partner', 'organizations', { search: tok, limit: '3', page: '2' });
        assert.deepEqual([second.pagination.total, second.data.map((x) => x.name)], [4, [org.beta]]);
        const uncounted = await list('partner', 'organizations', { search: tok, limit: '3', skipCount: 'true' });
        assert.deepEqual(uncounted.pagination, { page: 1, limit: 3, total: null, totalPages: null });
        assert.deepEqual(uncounted.data.map((x) => x.name), [org.gamma, org.alphaX, org.alpha]);
      });

      it('never returns an organization out of reach', async () => {
        assert.deepEqual(await names('partnerSelected', 'organizations', { search: 'alpha' }), [org.alpha]);
        assert.equal((await list('partnerSelected', 'organizations', { search: 'alpha' })).pagination.total, 1);
        assert.deepEqual(await names('foreignPartner', 'organizations', { search: tok }), [org.foreign]);
        assert.deepEqual(await names('foreignPartner', 'organizations', { search: 'alpha', partnerId: partner.id }), []);
      });

      it('counts an empty search as absent and refuses one over 255 characters', async () => {
        assert.equal((await list('partner', 'organizations', { search: '', limit: '1' })).pagination.total, 4);
        assertProblem(await call('partner')({ method: 'GET', url: `/api/v1/orgs/organizations?search=${'x'.repeat(256)}` }), 400, 'VALIDATION_FAILED');
      });
    });
  });
}
