// Unique violations become 409s in one place (unique-conflicts.ts): both backends name the violated
// index, so each duplicate gets its own detail through HTTP, and an index without an entry the
// generic one.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { as, assertProblem, login, type Session, loginWithMfa } from '../../test/support/clients.js';
import { createPartner, createUser } from '../../test/support/factory.js';
import { SYSTEM_SCOPE, withTenant } from './tenant-scope.js';
import { conflictFor } from './unique-conflicts.js';

const unique = () => randomBytes(4).toString('hex');

for (const backend of backends()) {
  describe(`unique violations on ${backend}`, () => {
    let t: TestApp;
    let system: Session;
    const call = (options: Parameters<ReturnType<typeof as>>[0]) => as(t.app, system)(options);
    const conflict = async (options: Parameters<ReturnType<typeof as>>[0], detail: string) =>
      assert.equal(assertProblem(await call(options), 409, 'CONFLICT').detail, detail);

    before(async () => {
      t = await testApp({ backend, env: { ALLOW_PARTNER_SIGNUP: 'true' } });
      system = await loginWithMfa(t.app, await createUser(t.db, { scope: 'system' }), t.clock);
    });
    after(() => t.close());

    it('names the violated index in err.constraint', async () => {
      const partner = await createPartner(t.db);
      const err = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query(`insert into partners (name, slug) values ('Twin', $1)`, [partner.slug]),
      ).then(() => null, (e: unknown) => e);
      assert.equal((err as { constraint?: string }).constraint, 'partners_live_slug');
      assert.equal(conflictFor(err)?.message, 'A partner with this slug already exists');
      const unlisted = { code: '23505', severity: 'ERROR', constraint: 'devices_agent_id' };
      assert.equal(conflictFor(unlisted)?.message, 'A resource with these values already exists');
      assert.equal(conflictFor(new Error('not a database error')), null);
    });

    it('answers a duplicate partner slug, on create and on update', async () => {
      const slug = `dup-${unique()}`;
      assert.equal((await call({ method: 'POST', url: '/api/v1/orgs/partners', payload: { name: 'One', slug } })).statusCode, 201);
      await conflict({ method: 'POST', url: '/api/v1/orgs/partners', payload: { name: 'Two', slug } }, 'A partner with this slug already exists');
      const other = await createPartner(t.db);
      await conflict({ method: 'PATCH', url: `/api/v1/orgs/partners/${other.id}`, payload: { slug } }, 'A partner with this slug already exists');
    });

    it('answers a duplicate organization slug within a partner, on create and on update', async () => {
      const partner = await createPartner(t.db);
      const slug = `dup-${unique()}`;
      const post = (name: string, s: string) => ({ method: 'POST' as const, url: '/api/v1/orgs/organizations', payload: { partnerId: partner.id, name, slug: s } });
      assert.equal((await call(post('One', slug))).statusCode, 201);
      await conflict(post('Two', slug), 'This partner already has an organization with this slug');
      const second = await call(post('Three', `other-${unique()}`));
      await conflict({ method: 'PATCH', url: `/api/v1/orgs/organizations/${second.json().id}`, payload: { slug } }, 'This partner already has an organization with this slug');
    });

    it('answers a duplicate e-mail, whatever its case, from user management and from sign-up', async () => {
      const email = `dup-${unique()}@example.test`;
      const user = { email, name: 'First', password: 'long-enough-pw', scope: 'system', role: 'readonly' };
      const created = await call({ method: 'POST', url: '/api/v1/users', payload: user });
      assert.equal(created.statusCode, 201, created.body);
      const detail = 'A user with this email already exists';
      await conflict({ method: 'POST', url: '/api/v1/users', payload: { ...user, email: email.toUpperCase() } }, detail);
      const other = await createUser(t.db, { scope: 'system' });
      await conflict({ method: 'PATCH', url: `/api/v1/users/${other.id}`, payload: { email } }, detail);
      const signup = await t.app.inject({
        method: 'POST', url: '/api/v1/auth/register', payload: { partnerName: `Dup ${unique()}`, name: 'Owner', email, password: 'long-enough-pw' },
      });
      assert.equal(assertProblem(signup, 409, 'CONFLICT').detail, detail);
    });
  });
}
