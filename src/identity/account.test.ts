// The caller's own account (API.md §10): the session list, ending sessions (at once, on every
// instance), MFA recovery codes, and changing one's own password.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { asOwner, testApp, testRedisUrl, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestUser } from '../../test/support/factory.js';
import { as, assertProblem, bearer, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { newRecoveryCode, recoveryCodeHash } from './account.service.js';

const redisUrl = await testRedisUrl();

describe('recovery code format', () => {
  it('makes 16 unambiguous characters in four groups, and hashes what a person might retype the same', () => {
    const codes = new Set(Array.from({ length: 200 }, newRecoveryCode));
    assert.equal(codes.size, 200);
    for (const code of codes) assert.match(code, /^[a-hjkmnp-tv-z0-9]{4}(-[a-hjkmnp-tv-z0-9]{4}){3}$/);
    const code = [...codes][0]!;
    assert.equal(recoveryCodeHash(code), recoveryCodeHash(` ${code.toUpperCase().replace(/-/g, ' ')} `));
    assert.notEqual(recoveryCodeHash(code), recoveryCodeHash([...codes][1]!));
  });
});

describe('own account: sessions, recovery codes, password', () => {
  let t: TestApp;
  let other: TestApp;
  let orgId: string;

  before(async () => {
    const env = { JWT_SECRET: randomBytes(32).toString('hex'), ...(redisUrl ? { REDIS_URL: redisUrl } : {}) };
    t = await testApp({ env });
    // A second instance on the same database: revocation must reach its caller cache at once.
    other = await testApp({ env, db: t.db, clock: t.clock });
    orgId = (await createOrg(t.db, (await createPartner(t.db)).id)).id;
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  const newUser = () => createUser(t.db, { scope: 'organization', orgId, role: 'technician' });
  const sessionsOf = async (s: Session) => {
    const res = await as(t.app, s)({ method: 'GET', url: '/api/v1/auth/sessions' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { data: { id: string; current: boolean; mfaVerified: boolean; sso: boolean; lastUsedAt: string; createdAt: string; ipAddress: string | null; userAgent: string | null }[]; pagination: { total: number } };
  };

  it('lists the caller\'s live sessions only, marking the current one', async () => {
    const user = await newUser();
    const first = await login(t.app, user);
    t.clock.advance(1000);
    const second = await login(t.app, user);
    const ended = await login(t.app, user);
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: ended.refreshToken } });
    await login(t.app, await newUser()); // someone else's

    const list = await sessionsOf(second);
    assert.equal(list.data.length, 2);
    assert.equal(list.pagination.total, 2);
    assert.deepEqual(list.data.map((s) => s.current), [true, false]);
    for (const s of list.data) {
      assert.deepEqual(Object.keys(s).sort(), ['createdAt', 'current', 'id', 'ipAddress', 'lastUsedAt', 'mfaVerified', 'sso', 'userAgent']);
      assert.equal(s.mfaVerified, false);
      assert.equal(s.sso, false);
    }
    // A refresh marks the session used: it moves to the top.
    t.clock.advance(5000);
    const refreshed = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: first.refreshToken } });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const after = await sessionsOf(second);
    assert.equal(after.data[0]!.current, false);
    assert.ok(Date.parse(after.data[0]!.lastUsedAt) >= Date.parse(after.data[0]!.createdAt) + 6000);
    // skipCount drops the total.
    const skipped = await as(t.app, second)({ method: 'GET', url: '/api/v1/auth/sessions?skipCount=true&limit=1' });
    assert.equal(skipped.json().pagination.total, null);
    assert.equal(skipped.json().data.length, 1);
  });

  it('counts a session idle longer than its refresh token lasts as ended: not listed, not ended again', async () => {
    const user = await newUser();
    const idle = await login(t.app, user);
    const idleId = (await sessionsOf(idle)).data[0]!.id;
    let active = await login(t.app, user);
    // The active session refreshes every six days; the idle one's only refresh token runs out after seven.
    for (const days of [6, 6]) {
      t.clock.advance(days * 24 * 3600_000);
      const refreshed = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: active.refreshToken } });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      active = { ...active, ...(refreshed.json() as { accessToken: string; refreshToken: string }) };
    }
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: idle.refreshToken } }), 401, 'UNAUTHENTICATED');
    const list = await sessionsOf(active);
    assert.deepEqual(list.data.map((s) => s.current), [true]);
    assert.equal(list.pagination.total, 1);
    assertProblem(await as(t.app, active)({ method: 'DELETE', url: `/api/v1/auth/sessions/${idleId}` }), 404, 'NOT_FOUND');
    assert.deepEqual((await as(t.app, active)({ method: 'POST', url: '/api/v1/auth/sessions/revoke-others' })).json(), { success: true, revoked: 0 });
  });

  it('ends one session at once on every instance, and answers 404 for sessions not the caller\'s', async () => {
    const user = await newUser();
    const mine = await login(t.app, user);
    const victim = await login(t.app, user);
    const stranger = await login(t.app, await newUser());
    // Both instances have the victim's caller cached.
    assert.equal((await as(t.app, victim)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);
    assert.equal((await as(other.app, victim)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);

    const victimId = (await sessionsOf(victim)).data.find((s) => s.current)!.id;
    const strangerId = (await sessionsOf(stranger)).data[0]!.id;
    assertProblem(await as(t.app, mine)({ method: 'DELETE', url: `/api/v1/auth/sessions/${strangerId}` }), 404, 'NOT_FOUND');
    assertProblem(await as(t.app, mine)({ method: 'DELETE', url: '/api/v1/auth/sessions/nope' }), 400, 'VALIDATION_FAILED');

    const res = await as(t.app, mine)({ method: 'DELETE', url: `/api/v1/auth/sessions/${victimId}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { success: true });
    if (redisUrl) {
      // The bus message crosses Redis; the next request through the other instance is refused.
      for (let i = 0; i < 50 && (await as(other.app, victim)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode === 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assertProblem(await as(other.app, victim)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    }
    assertProblem(await as(t.app, victim)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: victim.refreshToken } }), 401, 'UNAUTHENTICATED');
    // Already ended: 404, and the stranger's session is untouched.
    assertProblem(await as(t.app, mine)({ method: 'DELETE', url: `/api/v1/auth/sessions/${victimId}` }), 404, 'NOT_FOUND');
    assert.equal((await as(t.app, stranger)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);
    assert.equal((await as(t.app, mine)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);
  });

  it('ends every other session and keeps the current one', async () => {
    const user = await newUser();
    const keep = await login(t.app, user);
    const others = [await login(t.app, user), await login(t.app, user)];
    const res = await as(t.app, keep)({ method: 'POST', url: '/api/v1/auth/sessions/revoke-others' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { success: true, revoked: 2 });
    for (const s of others) assertProblem(await as(t.app, s)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    assert.deepEqual((await sessionsOf(keep)).data.map((s) => s.current), [true]);
    assert.deepEqual((await as(t.app, keep)({ method: 'POST', url: '/api/v1/auth/sessions/revoke-others' })).json(), { success: true, revoked: 0 });
  });

  it('takes user sessions only: an API key or no token is refused', async () => {
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/auth/sessions' }), 401, 'UNAUTHENTICATED');
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/sessions/revoke-others', headers: { 'x-api-key': 'svc_nope' } }), 401, 'UNAUTHENTICATED');
  });

  it('gives ten one-use recovery codes to an MFA-verified session, replacing earlier ones', async () => {
    const user = await newUser();
    const passwordOnly = await login(t.app, user);
    assertProblem(await as(t.app, passwordOnly)({ method: 'POST', url: '/api/v1/auth/mfa/recovery-codes' }), 403, 'MFA_REQUIRED');
    const verified = await loginWithMfa(t.app, user, t.clock);
    const first = (await as(t.app, verified)({ method: 'POST', url: '/api/v1/auth/mfa/recovery-codes' })).json().codes as string[];
    const res = await as(t.app, verified)({ method: 'POST', url: '/api/v1/auth/mfa/recovery-codes' });
    assert.equal(res.statusCode, 200, res.body);
    const codes = res.json().codes as string[];
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);

    const challenge = async () => {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } });
      return r.json().mfaToken as string;
    };
    // The replaced set no longer works; a wrong code counts as a failure.
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: await challenge(), recoveryCode: first[0] } }), 401, 'MFA_INVALID');
    const ok = await t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: await challenge(), recoveryCode: codes[3]!.toUpperCase() } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().user.mfaVerified, true);
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(ok.json()) });
    assert.equal(me.json().mfaVerified, true);
    // Each code once.
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: await challenge(), recoveryCode: codes[3] } }), 401, 'MFA_INVALID');
    const standing = await as(t.app, verified)({ method: 'GET', url: '/api/v1/auth/mfa/recovery-codes' });
    assert.equal(standing.json().remaining, 9);
    assert.ok(standing.json().createdAt);
    assert.deepEqual((await as(t.app, passwordOnly)({ method: 'GET', url: '/api/v1/auth/mfa/recovery-codes' })).json().remaining, 9);
    // Exactly one of code and recoveryCode.
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: await challenge() } }), 400, 'VALIDATION_FAILED');
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: await challenge(), code: '123456', recoveryCode: codes[4] } }), 400, 'VALIDATION_FAILED');

    const audit = await asOwner(t.db, async (tx) => {
      const { rows } = await tx.query<{ action: string; details: Record<string, unknown> }>(
        `select action, details from audit_entries where resource_id = $1 and action like 'user.mfa.recovery%' order by timestamp, id`, [user.id]);
      return rows;
    });
    assert.deepEqual(audit.map((r) => r.action).sort(), ['user.mfa.recovery_code_used', 'user.mfa.recovery_codes', 'user.mfa.recovery_codes']);
    assert.equal(audit.find((r) => r.action === 'user.mfa.recovery_code_used')!.details.codesLeft, 9);
    for (const row of audit) for (const code of [...codes, ...first]) assert.ok(!JSON.stringify(row.details).includes(code));
  });

  it('spends a recovery code once when two sign-ins race with it', async () => {
    const user = await newUser();
    const verified = await loginWithMfa(t.app, user, t.clock);
    const [code] = (await as(t.app, verified)({ method: 'POST', url: '/api/v1/auth/mfa/recovery-codes' })).json().codes as string[];
    const tokens = await Promise.all([0, 1].map(async () =>
      (await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } })).json().mfaToken as string));
    const results = await Promise.all(tokens.map((mfaToken) => t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken, recoveryCode: code } })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401]);
  });

  it('changes the caller\'s own password with the current one, ending the other sessions', async () => {
    const user: TestUser = await newUser();
    const here = await login(t.app, user);
    const elsewhere = await login(t.app, user);
    assertProblem(await as(t.app, here)({ method: 'POST', url: '/api/v1/auth/password/change', payload: { currentPassword: 'wrong-password', newPassword: 'a-new-password' } }), 400, 'VALIDATION_FAILED');
    assertProblem(await as(t.app, here)({ method: 'POST', url: '/api/v1/auth/password/change', payload: { currentPassword: user.password, newPassword: 'short' } }), 400, 'VALIDATION_FAILED');
    const res = await as(t.app, here)({ method: 'POST', url: '/api/v1/auth/password/change', payload: { currentPassword: user.password, newPassword: 'a-new-password' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await as(t.app, here)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);
    assertProblem(await as(t.app, elsewhere)({ method: 'GET', url: '/api/v1/auth/me' }), 401, 'UNAUTHENTICATED');
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } }), 401, 'UNAUTHENTICATED');
    await login(t.app, { email: user.email, password: 'a-new-password' });
  });

  it('counts a wrong current password as a failed sign-in: past the account’s limit, 429 even with the right one', async () => {
    const user: TestUser = await newUser();
    const here = await login(t.app, user);
    const change = (currentPassword: string) =>
      as(t.app, here)({ method: 'POST', url: '/api/v1/auth/password/change', payload: { currentPassword, newPassword: 'another-new-password' } });
    for (let i = 0; i < 10; i++) assertProblem(await change(`wrong-password-${i}`), 400, 'VALIDATION_FAILED');
    const refused = await change(user.password);
    assertProblem(refused, 429, 'RATE_LIMITED');
    assert.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After says when');
    // One limit for the account, whichever door the guesses came through.
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } }), 429, 'RATE_LIMITED');
    const failures = await asOwner(t.db, (tx) => tx.query(
      `select count(*)::int as n from audit_entries where action = 'user.password.change' and result = 'failure' and actor_id = $1`, [user.id]));
    assert.equal(failures.rows[0]!.n, 10, 'each wrong current password is audited as a failed change');
    // The window passes (and with it the access token): the right password changes it again.
    t.clock.advance(16 * 60_000);
    const later = await login(t.app, user);
    const res = await as(t.app, later)({ method: 'POST', url: '/api/v1/auth/password/change', payload: { currentPassword: user.password, newPassword: 'another-new-password' } });
    assert.equal(res.statusCode, 200, res.body);
  });
});
