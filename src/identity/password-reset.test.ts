// Password reset through HTTP, with a real SMTP server receiving the mail and the test following its
// link: one use, 30 minutes, newer links void older ones, every session ends at once, no enumeration
// (same answer, nothing sent, for unknown and deleted users), throttling, and a mail server that is
// down changes nothing in the answer.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { as, assertProblem, login, loginWithMfa } from '../../test/support/clients.js';
import { createOrg, createPartner, createUser, type TestOrg, type TestUser } from '../../test/support/factory.js';
import { freePort } from '../../test/support/free-port.js';
import { linkToken, startSmtpSink, type SmtpSink } from '../../test/support/smtp-sink.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { hashLinkToken } from './link-tokens.js';
import { FORGOT_MAX_PER_ADDRESS, FORGOT_MAX_PER_EMAIL, FORGOT_WINDOW_MS } from './password-reset.service.js';

const PUBLIC_URL = 'https://console.example.test';
const freshAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const stranger = () => `nobody-${randomBytes(5).toString('hex')}@example.test`;

for (const backend of backends()) {
  describe(`password reset on ${backend}`, () => {
    let t: TestApp;
    let sink: SmtpSink;
    let org: TestOrg;
    const forgot = (email: string, address = freshAddress()) =>
      t.app.inject({ method: 'POST', url: '/api/v1/auth/password/forgot', headers: { 'x-forwarded-for': address }, payload: { email } });
    const reset = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/auth/password/reset', payload });
    const me = (session: { accessToken: string }) => as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' });
    const newUser = () => createUser(t.db, { scope: 'organization', orgId: org.id, role: 'technician' });
    /** Asks for a link and returns the token from the mail that arrives for it. */
    const requestToken = async (user: TestUser) => {
      const earlier = new Set(sink.to(user.email));
      const res = await forgot(user.email);
      assert.equal(res.statusCode, 202, res.body);
      const mail = await sink.waitFor((m) => m.to.includes(user.email) && !earlier.has(m));
      return { token: linkToken(mail, 'reset-password'), mail };
    };

    before(async () => {
      sink = await startSmtpSink();
      t = await testApp({ backend, env: { SMTP_URL: sink.url, PUBLIC_URL, TRUST_PROXY_HEADERS: 'true' } });
      org = await createOrg(t.db, (await createPartner(t.db)).id);
    });
    after(async () => {
      await t.close();
      await sink.close();
    });

    it('mails a one-use link that sets the password and ends every session of the user at once', async () => {
      const user = await newUser();
      const first = await login(t.app, user);
      const second = await login(t.app, user);
      assert.equal((await me(first)).statusCode, 200); // cached now: the reset must clear that too

      const { token, mail } = await requestToken(user);
      assert.ok(mail.text.includes(`${PUBLIC_URL}/reset-password#token=${token}`));
      assert.ok(!mail.subject.includes(token));
      const res = await reset({ token, password: 'brand-new-password' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { success: true });

      assertProblem(await me(first), 401, 'UNAUTHENTICATED');
      assertProblem(await me(second), 401, 'UNAUTHENTICATED');
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: second.refreshToken } }), 401, 'UNAUTHENTICATED');
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } }), 401, 'UNAUTHENTICATED');
      await login(t.app, { email: user.email, password: 'brand-new-password' });
      assertProblem(await reset({ token, password: 'another-password' }), 400, 'TOKEN_INVALID');

      const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query<{ action: string }>(`select action, details from audit_entries where resource_id = $1 and action = 'user.password.reset'`, [user.id]));
      assert.equal(rows.length, 1);
      const recorded = JSON.stringify(rows);
      assert.ok(!recorded.includes(token) && !recorded.includes(hashLinkToken(token)));
    });

    it('answers an unknown, deleted or disabled user’s e-mail exactly as a known one, and mails nobody', async () => {
      const known = await newUser();
      const deleted = await newUser();
      const disabled = await newUser();
      await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`update users set deleted_at = now() where id = $1`, [deleted.id]));
      await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`update users set disabled_at = now() where id = $1`, [disabled.id]));
      const unknown = stranger();
      const answers = [await forgot(unknown), await forgot(deleted.email), await forgot(disabled.email), await forgot(known.email.toUpperCase())];
      for (const res of answers) {
        assert.equal(res.statusCode, 202, res.body);
        assert.equal(res.body, '{"success":true}');
        assert.equal(res.headers['content-type'], answers[0]!.headers['content-type']);
      }
      // Links are mailed in request order: once the known user's has arrived, the others were handled.
      const mail = await sink.waitFor((m) => m.to.includes(known.email));
      assert.deepEqual(mail.to, [known.email]);
      assert.equal(sink.to(unknown).length, 0);
      assert.equal(sink.to(deleted.email).length, 0);
      assert.equal(sink.to(disabled.email).length, 0);
    });

    it('voids the earlier link when a new one is requested', async () => {
      const user = await newUser();
      const older = await requestToken(user);
      const newer = await requestToken(user);
      assert.notEqual(older.token, newer.token);
      assertProblem(await reset({ token: older.token, password: 'brand-new-password' }), 400, 'TOKEN_INVALID');
      assert.equal((await reset({ token: newer.token, password: 'brand-new-password' })).statusCode, 200);
    });

    it('refuses bad tokens, and a bad body does not use the token up', async () => {
      const user = await newUser();
      const { token } = await requestToken(user);
      assertProblem(await reset({ token: 'nope', password: 'brand-new-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await reset({ token: `pwr_${'A'.repeat(43)}`, password: 'brand-new-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await reset({ token: token.replace(/^pwr_/, 'inv_'), password: 'brand-new-password' }), 400, 'TOKEN_INVALID');
      assertProblem(await reset({ token, password: 'short' }), 400, 'VALIDATION_FAILED');
      assertProblem(await reset({ token, password: 'y'.repeat(257) }), 400, 'VALIDATION_FAILED');
      assertProblem(await reset({ token }), 400, 'VALIDATION_FAILED');
      assertProblem(await forgot(''), 400, 'VALIDATION_FAILED');
      assert.equal((await reset({ token, password: 'brand-new-password' })).statusCode, 200);
    });

    it('refuses the link of a user deleted or disabled since it was mailed', async () => {
      for (const column of ['deleted_at', 'disabled_at']) {
        const user = await newUser();
        const { token } = await requestToken(user);
        await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`update users set ${column} = now() where id = $1`, [user.id]));
        assertProblem(await reset({ token, password: 'brand-new-password' }), 400, 'TOKEN_INVALID');
      }
    });

    it('keeps MFA: a reset password still needs the code', async () => {
      const user = await newUser();
      await loginWithMfa(t.app, user, t.clock);
      const { token } = await requestToken(user);
      assert.equal((await reset({ token, password: 'brand-new-password' })).statusCode, 200);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: 'brand-new-password' } });
      assert.equal(res.json().mfaRequired, true, res.body);
    });

    it('throttles per e-mail alike for known and unknown addresses, and a throttled request mails nothing', async () => {
      const known = await newUser();
      const unknown = stranger();
      for (const email of [known.email, unknown]) {
        for (let i = 0; i < FORGOT_MAX_PER_EMAIL; i++) assert.equal((await forgot(email)).statusCode, 202);
        const refused = assertProblem(await forgot(email.toUpperCase()), 429, 'RATE_LIMITED');
        assert.match(String(refused.detail), /for this e-mail/);
      }
      const last = await forgot(known.email);
      const retryAfter = Number(last.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= FORGOT_WINDOW_MS / 1000, String(last.headers['retry-after']));
      // Everything queued before this one has been handled once its mail arrives.
      const marker = await newUser();
      await requestToken(marker);
      assert.equal(sink.to(known.email).length, FORGOT_MAX_PER_EMAIL);
    });

    it('throttles per client address whatever the e-mail, and lets the address in again after the window', async () => {
      const address = freshAddress();
      for (let i = 0; i < FORGOT_MAX_PER_ADDRESS; i++) assert.equal((await forgot(stranger(), address)).statusCode, 202);
      const refused = assertProblem(await forgot(stranger(), address), 429, 'RATE_LIMITED');
      assert.match(String(refused.detail), /from this address/);
      assert.equal((await forgot(stranger(), freshAddress())).statusCode, 202, 'other addresses are not held up');
      t.clock.advance(FORGOT_WINDOW_MS);
      assert.equal((await forgot(stranger(), address)).statusCode, 202);
    });

    it('refuses a link after its 30 minutes', async () => {
      const user = await newUser();
      const { token } = await requestToken(user);
      t.clock.advance(30 * 60 * 1000 + 1000);
      assertProblem(await reset({ token, password: 'brand-new-password' }), 400, 'TOKEN_INVALID');
      await login(t.app, user); // the password is as it was
    });

    it('still answers 202 when the mail server is down, and logs no token', async () => {
      let logged = '';
      const logStream = new PassThrough();
      logStream.on('data', (chunk: Buffer) => {
        logged += chunk.toString();
      });
      const down = await testApp({ db: t.db, env: { SMTP_URL: `smtp://127.0.0.1:${await freePort()}`, LOG_LEVEL: 'info', TRUST_PROXY_HEADERS: 'true' }, logStream });
      try {
        const user = await newUser();
        const res = await down.app.inject({ method: 'POST', url: '/api/v1/auth/password/forgot', headers: { 'x-forwarded-for': freshAddress() }, payload: { email: user.email } });
        assert.equal(res.statusCode, 202, res.body);
        for (const started = Date.now(); !logged.includes('mail could not be sent') && Date.now() - started < 10_000;) await sleep(25);
        assert.match(logged, /mail could not be sent/);
        assert.match(logged, /Reset your Device Management password/);
        assert.ok(!/pwr_|token=/.test(logged), 'no token in the logs');
        const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`select 1 from password_resets where user_id = $1`, [user.id]));
        assert.equal(rows.length, 1);
      } finally {
        await down.close();
      }
    });
  });
}
