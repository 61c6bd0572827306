// Invitations through HTTP, with a real SMTP server receiving the mail and the test following its
// link: reach and "never more than you hold" as for /users, the list's reach, withdrawal, and every
// way a token stops working (used, withdrawn, expired, raced, address taken meanwhile).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { as, assertProblem, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { createOrg, createPartner, createUser, type TestOrg, type TestUser } from '../../test/support/factory.js';
import { freePort } from '../../test/support/free-port.js';
import { linkToken, startSmtpSink, type SmtpSink } from '../../test/support/smtp-sink.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { hashLinkToken } from './link-tokens.js';
import { totpCode } from './totp.js';

const PUBLIC_URL = 'https://console.example.test';
const DAY = 24 * 3600 * 1000;
const email = () => `invitee-${randomBytes(5).toString('hex')}@example.test`;

for (const backend of backends()) {
  describe(`invitations on ${backend}`, () => {
    let t: TestApp;
    let sink: SmtpSink;
    let orgA: TestOrg, orgB: TestOrg, orgQ: TestOrg;
    const u: Record<string, TestUser> = {};
    const s: Record<string, Session> = {};
    const call = (who: string) => as(t.app, s[who]!);
    const invite = (who: string, body: Record<string, unknown>) =>
      call(who)({ method: 'POST', url: '/api/v1/users/invitations', payload: { name: 'Invited Person', role: 'technician', ...body } });
    const accept = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload });
    const listIds = async (who: string, query = '') => {
      const res = await call(who)({ method: 'GET', url: `/api/v1/users/invitations?limit=100&${query}` });
      assert.equal(res.statusCode, 200, res.body);
      return new Set((res.json().data as { id: string }[]).map((i) => i.id));
    };
    /** Invites and returns the invitation and the token from the mail the invitee received. */
    const invited = async (who: string, body: Record<string, unknown>) => {
      const earlier = new Set(sink.to(String(body.email)));
      const res = await invite(who, body);
      assert.equal(res.statusCode, 201, res.body);
      const mail = await sink.waitFor((m) => m.to.includes(String(body.email)) && !earlier.has(m));
      return { invitation: res.json(), token: linkToken(mail, 'accept-invitation'), mail };
    };

    before(async () => {
      sink = await startSmtpSink();
      t = await testApp({ backend, env: { SMTP_URL: sink.url, PUBLIC_URL, MAIL_FROM: 'Device Management <no-reply@example.test>' } });
      const p = await createPartner(t.db);
      const q = await createPartner(t.db);
      orgA = await createOrg(t.db, p.id);
      orgB = await createOrg(t.db, p.id);
      orgQ = await createOrg(t.db, q.id);
      u.system = await createUser(t.db, { scope: 'system' });
      u.partnerAll = await createUser(t.db, { scope: 'partner', partnerId: p.id, orgAccess: 'all' });
      u.partnerSelected = await createUser(t.db, { scope: 'partner', partnerId: p.id, orgAccess: 'selected', orgIds: [orgA.id] });
      u.orgAdminA = await createUser(t.db, { scope: 'organization', orgId: orgA.id });
      u.orgAdminB = await createUser(t.db, { scope: 'organization', orgId: orgB.id });
      u.otherPartner = await createUser(t.db, { scope: 'partner', partnerId: q.id, orgAccess: 'all' });
      for (const [name, user] of Object.entries(u)) s[name] = await loginWithMfa(t.app, user, t.clock);
      s.passwordOnlyA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id }));
      s.readonlyA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' }));
    });
    after(async () => {
      await t.close();
      await sink.close();
    });

    it('mails a link that creates the user in the invited place and signs it in, once', async () => {
      const address = email();
      const { invitation, token, mail } = await invited('partnerAll', { email: address, scope: 'organization', orgId: orgA.id });
      assert.deepEqual(Object.keys(invitation).sort(), ['createdAt', 'email', 'expiresAt', 'id', 'name', 'orgAccess', 'orgId', 'orgIds', 'partnerId', 'role', 'scope']);
      assert.equal(invitation.partnerId, orgA.partnerId);
      assert.equal(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt), 7 * DAY);
      assert.equal(mail.from, 'no-reply@example.test');
      assert.ok(mail.text.includes(`${PUBLIC_URL}/accept-invitation#token=${token}`));
      assert.ok(!mail.subject.includes(token));

      const res = await accept({ token, password: 'invited-password', name: 'Chosen Name' });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(
        { email: body.user.email, name: body.user.name, scope: body.user.scope, orgId: body.user.orgId, partnerId: body.user.partnerId, role: body.user.role, mfaVerified: body.user.mfaVerified },
        { email: address, name: 'Chosen Name', scope: 'organization', orgId: orgA.id, partnerId: orgA.partnerId, role: 'technician', mfaVerified: false },
      );
      assert.equal((await as(t.app, body)({ method: 'GET', url: '/api/v1/auth/me' })).json().id, body.user.id);
      assertProblem(await accept({ token, password: 'invited-password' }), 400, 'TOKEN_INVALID');
      await login(t.app, { email: address, password: 'invited-password' });
      assert.ok(!(await listIds('partnerAll')).has(invitation.id), 'an accepted invitation leaves the list');

      const rows = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query<{ action: string; details: unknown }>(
        `select action, details from audit_entries where resource_name = $1 or actor_email = $1 order by timestamp, id`, [address]));
      const actions = rows.rows.map((r) => r.action);
      for (const action of ['user.invite', 'user.invitation.accept', 'user.login']) assert.ok(actions.includes(action), actions.join());
      const recorded = JSON.stringify(rows.rows);
      assert.ok(!recorded.includes(token) && !recorded.includes(hashLinkToken(token)), 'the audit never holds the token');
    });

    it('needs users:write and an MFA-verified session to invite, users:read to list', async () => {
      const body = { email: email(), name: 'X', role: 'readonly', scope: 'organization' };
      assertProblem(await as(t.app, s.passwordOnlyA!)({ method: 'POST', url: '/api/v1/users/invitations', payload: body }), 403, 'MFA_REQUIRED');
      assertProblem(await as(t.app, s.readonlyA!)({ method: 'POST', url: '/api/v1/users/invitations', payload: body }), 403, 'PERMISSION_DENIED');
      assertProblem(await as(t.app, s.readonlyA!)({ method: 'GET', url: '/api/v1/users/invitations' }), 403, 'PERMISSION_DENIED');
      assert.equal((await as(t.app, s.passwordOnlyA!)({ method: 'GET', url: '/api/v1/users/invitations' })).statusCode, 200);
      assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/users/invitations' }), 401, 'UNAUTHENTICATED');
      assert.equal(sink.to(body.email).length, 0);
    });

    it('invites only inside the caller’s reach: wrong scope and wrong tenant are 403, nothing is mailed', async () => {
      const refused: [string, Record<string, unknown>][] = [
        ['orgAdminA', { scope: 'partner' }],
        ['orgAdminA', { scope: 'organization', orgId: orgB.id }],
        ['orgAdminA', { scope: 'system' }],
        ['partnerAll', { scope: 'organization', orgId: orgQ.id }],
        ['partnerAll', { scope: 'partner', partnerId: orgQ.partnerId }],
        ['partnerAll', { scope: 'system' }],
        ['partnerSelected', { scope: 'organization', orgId: orgB.id }],
        ['otherPartner', { scope: 'organization', orgId: orgA.id }],
      ];
      for (const [who, body] of refused) {
        const address = email();
        assertProblem(await invite(who, { email: address, ...body }), 403, 'PERMISSION_DENIED');
        assert.equal(sink.to(address).length, 0);
      }
      assertProblem(await invite('system', { email: email(), scope: 'organization', orgId: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND');
      // An organization admin's invitation lands in its own organization.
      const own = await invite('orgAdminA', { email: email(), scope: 'organization' });
      assert.equal(own.statusCode, 201, own.body);
      assert.equal(own.json().orgId, orgA.id);
    });

    it('never grants more organization access than the caller holds', async () => {
      const partnerInvite = (body: Record<string, unknown>) => invite('partnerSelected', { email: email(), scope: 'partner', role: 'admin', ...body });
      assertProblem(await partnerInvite({ orgAccess: 'all' }), 403, 'PERMISSION_DENIED');
      assertProblem(await partnerInvite({ orgAccess: 'selected', orgIds: [orgB.id] }), 403, 'PERMISSION_DENIED');
      const address = email();
      const { token } = await invited('partnerSelected', { email: address, scope: 'partner', role: 'admin', orgAccess: 'selected', orgIds: [orgA.id] });
      const res = await accept({ token, password: 'invited-password' });
      assert.equal(res.statusCode, 200, res.body);
      const created = await call('partnerAll')({ method: 'GET', url: `/api/v1/users/${res.json().user.id}` });
      assert.deepEqual({ orgAccess: created.json().orgAccess, orgIds: created.json().orgIds }, { orgAccess: 'selected', orgIds: [orgA.id] });
    });

    it('lists the open invitations within reach, paginated', async () => {
      const ids: Record<string, string> = {};
      for (const [key, who, body] of [
        ['a', 'partnerAll', { scope: 'organization', orgId: orgA.id }],
        ['b', 'partnerAll', { scope: 'organization', orgId: orgB.id }],
        ['p', 'partnerAll', { scope: 'partner', orgAccess: 'none' }],
        ['q', 'otherPartner', { scope: 'organization', orgId: orgQ.id }],
      ] as const) {
        const res = await invite(who, { email: email(), ...body });
        assert.equal(res.statusCode, 201, res.body);
        ids[key] = res.json().id;
      }
      const sees = async (who: string, visible: string[], hidden: string[]) => {
        const seen = await listIds(who);
        for (const key of visible) assert.ok(seen.has(ids[key]!), `${who} should see ${key}`);
        for (const key of hidden) assert.ok(!seen.has(ids[key]!), `${who} should not see ${key}`);
      };
      await sees('orgAdminA', ['a'], ['b', 'p', 'q']);
      await sees('orgAdminB', ['b'], ['a', 'p', 'q']);
      await sees('partnerSelected', ['a', 'p'], ['b', 'q']);
      await sees('partnerAll', ['a', 'b', 'p'], ['q']);
      await sees('otherPartner', ['q'], ['a', 'b', 'p']);
      await sees('system', ['a', 'b', 'p', 'q'], []);
      assert.equal((await listIds('orgAdminA', `orgId=${orgB.id}`)).size, 0, 'a filter outside reach is an empty list');
      assert.deepEqual([...(await listIds('system', `orgId=${orgQ.id}`))], [ids.q]);

      const page = (await call('partnerAll')({ method: 'GET', url: '/api/v1/users/invitations?limit=1&page=0' })).json();
      assert.equal(page.data.length, 1);
      assert.equal(page.pagination.page, 1);
      assert.ok(page.pagination.total >= 3 && page.pagination.totalPages === page.pagination.total);
      assert.equal(page.data[0].id, ids.p, 'newest first');
      const skip = (await call('partnerAll')({ method: 'GET', url: '/api/v1/users/invitations?skipCount=true' })).json();
      assert.equal(skip.pagination.total, null);
      assertProblem(await call('partnerAll')({ method: 'GET', url: '/api/v1/users/invitations?limit=x' }), 400, 'VALIDATION_FAILED');
    });

    it('withdraws an invitation: its link stops working; outside reach is 403, an unknown id 404', async () => {
      const address = email();
      const { invitation, token } = await invited('partnerAll', { email: address, scope: 'organization', orgId: orgA.id });
      const del = (who: string, id = invitation.id) => call(who)({ method: 'DELETE', url: `/api/v1/users/invitations/${id}` });
      assertProblem(await del('orgAdminB'), 403, 'PERMISSION_DENIED');
      assertProblem(await del('otherPartner'), 403, 'PERMISSION_DENIED');
      assertProblem(await as(t.app, s.passwordOnlyA!)({ method: 'DELETE', url: `/api/v1/users/invitations/${invitation.id}` }), 403, 'MFA_REQUIRED');
      assertProblem(await del('orgAdminA', '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
      const done = await del('orgAdminA');
      assert.equal(done.statusCode, 200, done.body);
      assert.deepEqual(done.json(), { success: true });
      assertProblem(await accept({ token, password: 'invited-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await del('orgAdminA'), 404, 'NOT_FOUND');
      assert.ok(!(await listIds('partnerAll')).has(invitation.id));
      // The address is free again.
      assert.equal((await invite('partnerAll', { email: address, scope: 'organization', orgId: orgA.id })).statusCode, 201);

      // A partner admin reaching fewer organizations cannot withdraw a broader invitation.
      const broad = await invite('partnerAll', { email: email(), scope: 'partner', orgAccess: 'all' });
      assertProblem(await del('partnerSelected', broad.json().id), 403, 'PERMISSION_DENIED');
      assert.ok((await listIds('partnerAll')).has(broad.json().id));
    });

    it('refuses a second invitation or an invitation for a live user’s e-mail (409), whatever the case', async () => {
      const taken = assertProblem(await invite('orgAdminB', { email: u.orgAdminB!.email.toUpperCase(), scope: 'organization' }), 409, 'CONFLICT');
      assert.equal(taken.detail, 'A user with this email already exists');
      // Out of reach is 403 whatever the address: the conflict is only told to a caller who could invite there.
      assertProblem(await invite('otherPartner', { email: u.orgAdminA!.email, scope: 'organization', orgId: orgA.id }), 403, 'PERMISSION_DENIED');
      const address = email();
      assert.equal((await invite('orgAdminA', { email: address, scope: 'organization' })).statusCode, 201);
      const twice = assertProblem(await invite('otherPartner', { email: address.toUpperCase(), scope: 'organization', orgId: orgQ.id }), 409, 'CONFLICT');
      assert.equal(twice.detail, 'An open invitation for this email already exists');
    });

    it('rejects bad tokens and bad bodies without using the token up', async () => {
      const { token } = await invited('orgAdminA', { email: email(), scope: 'organization' });
      assertProblem(await accept({ token: 'not-a-token', password: 'invited-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await accept({ token: '', password: 'invited-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await accept({ token: `inv_${'A'.repeat(600)}`, password: 'invited-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await accept({ token: `inv_${'A'.repeat(43)}`, password: 'invited-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await accept({ token: token.replace(/^inv_/, 'pwr_'), password: 'invited-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await accept({ token, password: 'short' }), 400, 'VALIDATION_FAILED');
      assertProblem(await accept({ token, password: 'x'.repeat(257) }), 400, 'VALIDATION_FAILED');
      assertProblem(await accept({ token, password: 'invited-password', role: 'admin' }), 400, 'VALIDATION_FAILED');
      assertProblem(await accept({ token, password: 'invited-password', name: '' }), 400, 'VALIDATION_FAILED');
      const res = await accept({ token, password: 'invited-password' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().user.name, 'Invited Person', 'the invitation’s name when none is chosen');
    });

    it('lets exactly one of concurrent accepts through', async () => {
      const address = email();
      const { token } = await invited('orgAdminA', { email: address, scope: 'organization' });
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => accept({ token, password: `racing-password-${i}` })));
      const statuses = results.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [200, 400, 400, 400, 400, 400], results.map((r) => r.body).join('\n'));
      for (const r of results.filter((x) => x.statusCode === 400)) assertProblem(r, 400, 'TOKEN_INVALID');
      const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query<{ n: number }>(`select count(*)::int as n from users where lower(email) = $1 and deleted_at is null`, [address]));
      assert.equal(rows[0]!.n, 1);
    });

    it('answers 409 when a user took the e-mail meanwhile, and creates nobody', async () => {
      const address = email();
      const { token } = await invited('orgAdminA', { email: address, scope: 'organization' });
      const direct = await call('orgAdminA')({ method: 'POST', url: '/api/v1/users', payload: { email: address, name: 'Direct', password: 'direct-password', scope: 'organization', role: 'readonly' } });
      assert.equal(direct.statusCode, 201, direct.body);
      assertProblem(await accept({ token, password: 'invited-password' }), 409, 'CONFLICT');
      await login(t.app, { email: address, password: 'direct-password' });
    });

    it('withdraws the invitation when its mail cannot be sent (503)', async () => {
      const broken = await testApp({ db: t.db, env: { SMTP_URL: `smtp://127.0.0.1:${await freePort()}` } });
      try {
        const admin = await loginWithMfa(broken.app, await createUser(t.db, { scope: 'organization', orgId: orgB.id }), broken.clock);
        const address = email();
        const post = () => as(broken.app, admin)({ method: 'POST', url: '/api/v1/users/invitations', payload: { email: address, name: 'N', role: 'readonly', scope: 'organization' } });
        assertProblem(await post(), 503, 'SERVICE_UNAVAILABLE');
        assertProblem(await post(), 503, 'SERVICE_UNAVAILABLE'); // not 409: the first was withdrawn
        const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
          tx.query<{ open: number }>(`select count(*) filter (where deleted_at is null)::int as open from user_invitations where email = $1`, [address]));
        assert.equal(rows[0]!.open, 0);
      } finally {
        await broken.close();
      }
    });

    // Last: moving the clock a week ends every access token issued before.
    it('refuses an expired token, still lists the lapsed invitation, and lets the address be invited again', async () => {
      const address = email();
      const { invitation, token } = await invited('orgAdminA', { email: address, scope: 'organization' });
      t.clock.advance(7 * DAY + 60_000);
      assertProblem(await accept({ token, password: 'invited-password' }), 400, 'TOKEN_INVALID');

      // Sign in again (TOTP) on the moved clock.
      const challenge = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: u.orgAdminA!.email, password: u.orgAdminA!.password } });
      const verify = await t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: challenge.json().mfaToken, code: totpCode(s.orgAdminA!.totpSecret!, t.clock.now()) } });
      assert.equal(verify.statusCode, 200, verify.body);
      s.orgAdminA = verify.json();
      const listed = (await call('orgAdminA')({ method: 'GET', url: '/api/v1/users/invitations?limit=100' })).json().data.find((i: { id: string }) => i.id === invitation.id);
      assert.ok(listed && Date.parse(listed.expiresAt) < t.clock.now(), 'a lapsed invitation is listed with its past expiresAt');

      const again = await invited('orgAdminA', { email: address, scope: 'organization' });
      assert.notEqual(again.invitation.id, invitation.id);
      assert.ok(!(await listIds('orgAdminA')).has(invitation.id), 'the new invitation replaces the lapsed one');
      assertProblem(await accept({ token, password: 'invited-password' }), 400, 'TOKEN_INVALID');
      assert.equal((await accept({ token: again.token, password: 'invited-password' })).statusCode, 200);
    });
  });
}
