// Sign-in, tokens, refresh rotation, sign-out, MFA and the attempt limit, through HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHmac } from 'node:crypto';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser } from '../../test/support/factory.js';
import { as, assertProblem, bearer, login, loginWithMfa } from '../../test/support/clients.js';
import { totpCode } from './totp.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';

function forgeJwt(header: object, payload: object, secret: string): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${enc(header)}.${enc(payload)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

for (const backend of backends()) {
  describe(`auth on ${backend}`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    it('signs in and returns tokens with the /auth/me user', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email.toUpperCase(), password: user.password } });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.expiresIn, 900);
      assert.equal(typeof body.refreshToken, 'string');
      assert.deepEqual(Object.keys(body.user).sort(), ['email', 'id', 'mfaEnabled', 'mfaVerified', 'name', 'orgId', 'partnerId', 'permissions', 'role', 'scope']);
      const me = await as(t.app, body)({ method: 'GET', url: '/api/v1/auth/me' });
      assert.equal(me.statusCode, 200);
      assert.deepEqual(me.json(), body.user);
      assert.equal(me.json().scope, 'system');
      assert.ok(me.json().permissions.includes('users:write'));
      assert.equal(me.json().mfaVerified, false);
    });

    it('answers a wrong password and an unknown e-mail alike with 401', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const wrong = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: 'nope-nope-nope' } });
      const body = assertProblem(wrong, 401, 'UNAUTHENTICATED');
      const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'ghost@example.test', password: 'nope-nope-nope' } });
      assert.equal(assertProblem(unknown, 401, 'UNAUTHENTICATED').detail, body.detail);
    });

    it('locks an e-mail for 15 minutes after 10 failures, even for the right password', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      for (let i = 0; i < 10; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: `wrong-${i}-password` } });
        assert.equal(res.statusCode, 401);
      }
      const locked = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } });
      assertProblem(locked, 429, 'RATE_LIMITED');
      const retryAfter = Number(locked.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`);
      t.clock.advance(15 * 60 * 1000 + 1000);
      await login(t.app, user);
    });

    it('does not let parallel guesses slip past the limit', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const results = await Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: `guess-${i}-password` } }),
        ),
      );
      const counts = results.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.statusCode]: (acc[r.statusCode] ?? 0) + 1 }), {});
      assert.deepEqual(counts, { 401: 10, 429: 5 });
    });

    it('rejects expired, forged, alg:none and tampered access tokens', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const session = await login(t.app, user);
      const me = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await me(session.accessToken)).statusCode, 200);

      const [header, payload] = session.accessToken.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      assertProblem(await me(forgeJwt({ alg: 'HS256', typ: 'JWT' }, claims, 'not-the-server-secret')), 401, 'UNAUTHENTICATED');
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
      assertProblem(await me(none), 401, 'UNAUTHENTICATED');
      const escalated = Buffer.from(JSON.stringify({ ...claims, mfa: true })).toString('base64url');
      assertProblem(await me(`${header}.${escalated}.${session.accessToken.split('.')[2]}`), 401, 'UNAUTHENTICATED');
      assertProblem(await me('not.a.jwt'), 401, 'UNAUTHENTICATED');

      t.clock.advance(15 * 60 * 1000 + 1000);
      assertProblem(await me(session.accessToken), 401, 'UNAUTHENTICATED');
    });

    it('rotates refresh tokens and revokes the whole session when a spent one comes back', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const first = await login(t.app, user);
      const refresh = (refreshToken: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } });

      const second = await refresh(first.refreshToken);
      assert.equal(second.statusCode, 200, second.body);
      const pair = second.json();
      assert.notEqual(pair.refreshToken, first.refreshToken);
      assert.equal((await as(t.app, pair)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);

      assertProblem(await refresh(first.refreshToken), 401, 'UNAUTHENTICATED');
      // The family is gone: the newest refresh token and its access token stop working at once.
      assertProblem(await refresh(pair.refreshToken), 401, 'UNAUTHENTICATED');
      assertProblem(await as(t.app, pair)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    });

    it('lets exactly one of two concurrent refreshes with the same token win', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const session = await login(t.app, user);
      const results = await Promise.all(
        [1, 2].map(() => t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: session.refreshToken } })),
      );
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401]);
    });

    // API.md §3: a malformed or unknown refresh token is 401 UNAUTHENTICATED, empty and overlong ones included.
    it('rejects malformed and unknown refresh tokens with 401, on refresh and on logout', async () => {
      for (const refreshToken of ['', 'garbage', `rt_${'A'.repeat(43)}`, `rt_${'A'.repeat(600)}`]) {
        for (const url of ['/api/v1/auth/refresh', '/api/v1/auth/logout']) {
          assertProblem(await t.app.inject({ method: 'POST', url, payload: { refreshToken } }), 401, 'UNAUTHENTICATED');
        }
      }
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: {} }), 400, 'VALIDATION_FAILED');
    });

    it('signs out: the refresh token and the access token of the session stop working', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const session = await login(t.app, user);
      const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: session.refreshToken } });
      assert.equal(out.statusCode, 200);
      assert.deepEqual(out.json(), { success: true });
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: session.refreshToken } }), 401, 'UNAUTHENTICATED');
      assertProblem(await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    });

    it('enrols TOTP, then signs in through the MFA step with an MFA-verified token that survives refresh', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const session = await loginWithMfa(t.app, user, t.clock);
      const me = await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' });
      assert.equal(me.json().mfaEnabled, true);
      assert.equal(me.json().mfaVerified, true);
      const refreshed = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: session.refreshToken } });
      assert.equal(refreshed.json().user.mfaVerified, true);

      const challenge = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } });
      assert.equal(challenge.json().mfaRequired, true);
      assert.equal(challenge.json().accessToken, undefined);
    });

    it('refuses a wrong code, a replayed code and an expired MFA token', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const session = await loginWithMfa(t.app, user, t.clock);
      const secret = session.totpSecret!;
      const challenge = async () =>
        (await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } })).json().mfaToken as string;
      const verify = (mfaToken: string, code: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken, code } });

      const wrongCode = totpCode(secret, t.clock.now()) === '000000' ? '111111' : '000000';
      assertProblem(await verify(await challenge(), wrongCode), 401, 'MFA_INVALID');
      // The code that completed the last sign-in is spent for its whole window.
      assertProblem(await verify(await challenge(), totpCode(secret, t.clock.now())), 401, 'MFA_INVALID');
      t.clock.advance(30_000);
      const stale = await challenge();
      t.clock.advance(6 * 60 * 1000);
      assertProblem(await verify(stale, totpCode(secret, t.clock.now())), 401, 'UNAUTHENTICATED');
      assert.equal((await verify(await challenge(), totpCode(secret, t.clock.now()))).statusCode, 200);
    });

    it('accepts one of two parallel sign-ins with the same code', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const { totpSecret } = await loginWithMfa(t.app, user, t.clock);
      t.clock.advance(30_000);
      const challenges = await Promise.all([1, 2].map(async () =>
        (await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } })).json().mfaToken as string));
      const code = totpCode(totpSecret!, t.clock.now());
      const results = await Promise.all(challenges.map((mfaToken) => t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken, code } })));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401]);
    });

    it('refuses to enable MFA without a setup, with a wrong code, or twice', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const session = await login(t.app, user);
      const call = as(t.app, session);
      assertProblem(await call({ method: 'POST', url: '/api/v1/auth/mfa/enable', payload: { code: '123456' } }), 409, 'CONFLICT');
      const setup = await call({ method: 'POST', url: '/api/v1/auth/mfa/setup', headers: { 'content-type': 'application/json' } });
      assert.equal(setup.statusCode, 200, setup.body);
      assert.match(setup.json().otpauthUrl, /^otpauth:\/\/totp\/.+secret=/);
      assertProblem(await call({ method: 'POST', url: '/api/v1/auth/mfa/enable', payload: { code: 'abcdef' } }), 401, 'MFA_INVALID');
      const code = totpCode(setup.json().secret, t.clock.now());
      assert.equal((await call({ method: 'POST', url: '/api/v1/auth/mfa/enable', payload: { code } })).statusCode, 200);
      assertProblem(await call({ method: 'POST', url: '/api/v1/auth/mfa/setup' }), 409, 'CONFLICT');
    });

    it('blocks every request of a user whose partner is not active, and lets it through once active', async () => {
      const partner = await createPartner(t.db, { status: 'suspended' });
      const user = await createUser(t.db, { scope: 'partner', partnerId: partner.id });
      const session = await login(t.app, user);
      assertProblem(await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' }), 403, 'PARTNER_INACTIVE');
      // A change made behind the service's back is seen once the caller cache entry expires (10 s).
      await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`update partners set status = 'active' where id = $1`, [partner.id]));
      t.clock.advance(11_000);
      assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);
      await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`update partners set status = 'suspended' where id = $1`, [partner.id]));
      const org = await createOrg(t.db, partner.id);
      const orgUser = await createUser(t.db, { scope: 'organization', orgId: org.id });
      assertProblem(await as(t.app, await login(t.app, orgUser))({ method: 'GET', url: '/api/v1/users' }), 403, 'PARTNER_INACTIVE');
    });

    it('does not offer partner self-signup unless ALLOW_PARTNER_SIGNUP is set', async () => {
      const res = await t.app.inject({
        method: 'POST', url: '/api/v1/auth/register', payload: { partnerName: 'Acme', name: 'A', email: 'a@acme.test', password: 'long-enough-pw' },
      });
      assertProblem(res, 403, 'PERMISSION_DENIED');
    });
  });
}

describe('partner self-signup', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { ALLOW_PARTNER_SIGNUP: 'true' } });
  });
  after(() => t.close());

  it('creates a pending partner whose admin can sign in but is held by the partner guard', async () => {
    const email = `owner-${Date.now()}@acme.test`;
    const res = await t.app.inject({
      method: 'POST', url: '/api/v1/auth/register', payload: { partnerName: 'Acme Managed IT', name: 'Owner', email, password: 'long-enough-pw' },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().partner.status, 'pending');
    assert.match(res.json().partner.slug, /^acme-managed-it/);
    assert.equal(res.json().user.scope, 'partner');
    const session = await login(t.app, { email, password: 'long-enough-pw' });
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(session) }), 403, 'PARTNER_INACTIVE');
    const again = await t.app.inject({
      method: 'POST', url: '/api/v1/auth/register', payload: { partnerName: 'Acme Managed IT', name: 'Owner', email, password: 'long-enough-pw' },
    });
    assertProblem(again, 409, 'CONFLICT');
  });
});
