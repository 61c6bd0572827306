// API.md §4: every paginated list takes skipCount; with skipCount=true its total and totalPages
// are null, otherwise numbers. Swept over the lists of the served document, so a new list that
// forgets the parameter fails here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createOrg, createPartner, createSite, createUser } from '../../test/support/factory.js';
import { as, loginWithMfa, type Session } from '../../test/support/clients.js';

type Operation = { operationId: string; parameters?: { name: string; in: string }[]; responses: Record<string, unknown> };

// Required query values of lists that need one.
const REQUIRED_QUERY: Record<string, string> = { searchAuditLogs: 'q=a' };

describe('skipCount on every paginated list', () => {
  let t: TestApp;
  let admin: Session;
  let lists: { path: string; op: Operation }[];

  before(async () => {
    t = await testApp({ backend: 'pglite' });
    const org = await createOrg(t.db, (await createPartner(t.db)).id);
    const site = await createSite(t.db, org.id);
    await createDevice(t.db, org.id, { siteId: site.id });
    await createApiKey(t.db, org.id);
    admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'system' }), t.clock);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
    lists = Object.entries(doc.paths).flatMap(([path, item]) => {
      const op = item.get;
      const body = JSON.stringify(op?.responses?.['200'] ?? {});
      return op && body.includes('"pagination"') && body.includes('"totalPages"') ? [{ path, op }] : [];
    });
  });
  after(() => t.close());

  it('finds the lists', () => {
    assert.ok(lists.length >= 10, `${lists.length} paginated lists`);
  });

  it('declares skipCount on each and answers null totals with it, numbers without', async () => {
    for (const { path, op } of lists) {
      assert.ok(op.parameters?.some((p) => p.in === 'query' && p.name === 'skipCount'), `${op.operationId} takes no skipCount`);
      if (op.parameters?.some((p) => p.in === 'path')) continue; // per-device lists: covered by their own tests
      const extra = REQUIRED_QUERY[op.operationId] ? `&${REQUIRED_QUERY[op.operationId]}` : '';
      const counted = await as(t.app, admin)({ method: 'GET', url: `${path}?limit=1${extra}` });
      assert.equal(counted.statusCode, 200, `${op.operationId}: ${counted.body}`);
      assert.equal(typeof counted.json().pagination.total, 'number', `${op.operationId} counts by default`);
      const skipped = await as(t.app, admin)({ method: 'GET', url: `${path}?limit=1&skipCount=true${extra}` });
      assert.equal(skipped.statusCode, 200, `${op.operationId}: ${skipped.body}`);
      assert.deepEqual([skipped.json().pagination.total, skipped.json().pagination.totalPages], [null, null], `${op.operationId} with skipCount`);
    }
  });
});
