// The sign-in limits under attack, through HTTP on both backends: a flood of made-up e-mails from
// one address is cut off after 100 failures before any password is hashed and leaves at most ten audit rows;
// other addresses, and the real admin, are not held up; the per-account rule of API.md §3 stands.
// Addresses come from X-Forwarded-For (TRUST_PROXY_HEADERS=true), a fresh one per test.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, privateTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import { assertProblem, loginWithMfa } from '../../test/support/clients.js';
import { createOrg, createPartner, createUser } from '../../test/support/factory.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { ADDRESS_MAX_FAILURES, clientKeyOf, LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS, passwordVerificationCount, UNKNOWN_EMAIL_AUDITS_PER_ADDRESS } from './auth.service.js';
import { totpCode } from './totp.js';

const freshAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const strangers = () => {
  const domain = `flood-${randomBytes(4).toString('hex')}.test`;
  return { domain, email: (i: number) => `nobody-${i}@${domain}` };
};

/** Responses by status; an unexpected status brings its first body along, into the failure message. */
function tally(results: { statusCode: number; body: string }[]): Record<string, number | string> {
  const counts: Record<string, number | string> = {};
  for (const r of results) counts[r.statusCode] = Number(counts[r.statusCode] ?? 0) + 1;
  const odd = results.find((r) => ![200, 401, 429].includes(r.statusCode));
  if (odd) counts.unexpected = odd.body;
  return counts;
}

function assertThrottled(res: Parameters<typeof assertProblem>[0], by: RegExp): void {
  assert.match(String(assertProblem(res, 429, 'RATE_LIMITED').detail), by);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= LOGIN_WINDOW_MS / 1000, `Retry-After ${String(res.headers['retry-after'])}`);
}

describe('client keys of sign-in attempts', () => {
  it('counts IPv4 addresses one by one and IPv6 addresses by their /64', () => {
    assert.equal(clientKeyOf('203.0.113.7'), '203.0.113.7');
    assert.equal(clientKeyOf('2001:db8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(clientKeyOf('2001:0db8:0001:0002:ffff:eeee:dddd:cccc'), '2001:db8:1:2::/64');
    assert.equal(clientKeyOf('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(clientKeyOf('::1'), '0:0:0:0::/64');
    assert.equal(clientKeyOf('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(clientKeyOf('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
    assert.equal(clientKeyOf(null), 'unknown');
    assert.equal(clientKeyOf('not-an-address'), 'unknown');
  });
});

for (const backend of backends()) {
  describe(`sign-in throttle on ${backend}`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend, env: { TRUST_PROXY_HEADERS: 'true' } });
    });
    after(() => t.close());

    const signIn = (address: string, email: string, password: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'x-forwarded-for': address }, payload: { email, password } });
    const flood = (address: string, count: number) => {
      const { domain, email } = strangers();
      return { domain, requests: Array.from({ length: count }, (_, i) => signIn(address, email(i), `guess-${i}-password`)) };
    };
    const auditRows = async (where: string, param: string) =>
      withTenant(t.db, SYSTEM_SCOPE, async (tx) => (await tx.query<{ n: number }>(`select count(*)::int as n from audit_logs where ${where}`, [param])).rows[0]!.n);

    it('cuts a parallel flood of unknown e-mails from one address off after 100 failures, with ten audit rows and no hashing past it', async () => {
      const address = freshAddress();
      const hashedBefore = passwordVerificationCount();
      const { domain, requests } = flood(address, 120);
      const results = await Promise.all(requests);

      assert.deepEqual(tally(results), { 401: ADDRESS_MAX_FAILURES, 429: 120 - ADDRESS_MAX_FAILURES });
      for (const res of results.filter((r) => r.statusCode === 429)) assertThrottled(res, /from this address/);
      assert.equal(passwordVerificationCount() - hashedBefore, ADDRESS_MAX_FAILURES);
      // Counted, not chained: only the address's first probes reach the platform chain (pending rows included).
      assert.equal(await auditRows(`actor_email like '%@' || $1`, domain), UNKNOWN_EMAIL_AUDITS_PER_ADDRESS);
      assert.equal(await auditRows(`ip_address = $1`, address), UNKNOWN_EMAIL_AUDITS_PER_ADDRESS);
      const counted = await withTenant(t.db, SYSTEM_SCOPE, async (tx) =>
        (await tx.query<{ outcome: string; n: number }>(`select outcome, count(*)::int as n from login_attempts where client_key = $1 group by outcome`, [address])).rows);
      assert.deepEqual(counted, [{ outcome: 'failed', n: ADDRESS_MAX_FAILURES }]);

      // The window slides: once the first failures are 15 minutes old, the address may try again.
      t.clock.advance(LOGIN_WINDOW_MS + 1000);
      assert.equal((await signIn(address, `late@${domain}`, 'guess-late-password')).statusCode, 401);
    });

    it('holds neither another address nor the real admin signing in from it during the flood', async () => {
      const admin = await createUser(t.db, { scope: 'system' });
      const flooded = freshAddress();
      const office = freshAddress();
      const { requests } = flood(flooded, ADDRESS_MAX_FAILURES + 20);
      const adminLogin = signIn(office, admin.email, admin.password);
      const results = await Promise.all([...requests, adminLogin]);
      const adminResult = results.at(-1)!;
      assert.equal(adminResult.statusCode, 200, adminResult.body);
      assert.ok(adminResult.json().accessToken);
      assert.deepEqual(tally(results.slice(0, -1)), { 401: ADDRESS_MAX_FAILURES, 429: 20 });

      // From the flooded address even the right password waits; from the other one a wrong
      // password is an ordinary 401, and the admin's failure is audited in its (platform) chain.
      assertThrottled(await signIn(flooded, admin.email, admin.password), /from this address/);
      assertProblem(await signIn(office, admin.email, 'not-the-password'), 401, 'UNAUTHENTICATED');
      assert.equal(await auditRows(`action = 'user.login.failed' and actor_id = $1::uuid`, admin.id), 1);
      assert.equal((await signIn(office, admin.email, admin.password)).statusCode, 200);
    });

    it('keeps the per-account rule: 10 failures for one e-mail, from any addresses, lock it for 15 minutes', async () => {
      const org = await createOrg(t.db, (await createPartner(t.db)).id);
      const user = await createUser(t.db, { scope: 'organization', orgId: org.id });
      const failures = await Promise.all(
        Array.from({ length: LOGIN_MAX_FAILURES }, (_, i) => signIn(freshAddress(), user.email, `wrong-${i}-password`)),
      );
      assert.deepEqual(tally(failures), { 401: LOGIN_MAX_FAILURES });
      assertThrottled(await signIn(freshAddress(), user.email, user.password), /for this account/);
      // Failures of a user that exists stay audited, in the user's organization chain.
      const audited = await withTenant(t.db, SYSTEM_SCOPE, async (tx) =>
        (await tx.query<{ result: string; n: number }>(
          `select result, count(*)::int as n from audit_logs where actor_id = $1 and action = 'user.login.failed' and org_id = $2 group by result order by result`,
          [user.id, org.id],
        )).rows);
      assert.deepEqual(audited, [{ result: 'denied', n: 1 }, { result: 'failure', n: LOGIN_MAX_FAILURES }]);
      t.clock.advance(LOGIN_WINDOW_MS + 1000);
      assert.equal((await signIn(freshAddress(), user.email, user.password)).statusCode, 200);
    });

    it('bounds what a flood against one known account from one address can write and hash', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const address = freshAddress();
      const hashedBefore = passwordVerificationCount();
      const total = ADDRESS_MAX_FAILURES + 20;
      const results = await Promise.all(Array.from({ length: total }, (_, i) => signIn(address, user.email, `guess-${i}-password`)));
      assert.deepEqual(tally(results), { 401: LOGIN_MAX_FAILURES, 429: total - LOGIN_MAX_FAILURES });
      assert.equal(passwordVerificationCount() - hashedBefore, LOGIN_MAX_FAILURES);
      // 10 failures and 90 account refusals are audited; then the address limit stops the writes.
      assert.equal(await auditRows(`action = 'user.login.failed' and actor_id = $1::uuid`, user.id), ADDRESS_MAX_FAILURES);
      const byAccount = results.filter((r) => r.statusCode === 429 && /for this account/.test(r.json().detail)).length;
      assert.equal(byAccount, ADDRESS_MAX_FAILURES - LOGIN_MAX_FAILURES);
    });

    it('applies the address limit to MFA codes as well', async () => {
      const user = await createUser(t.db, { scope: 'system' });
      const { totpSecret } = await loginWithMfa(t.app, user, t.clock);
      t.clock.advance(30_000);
      const office = freshAddress();
      const challenge = await signIn(office, user.email, user.password);
      assert.equal(challenge.json().mfaRequired, true, challenge.body);
      const flooded = freshAddress();
      await Promise.all(flood(flooded, ADDRESS_MAX_FAILURES).requests);
      const verify = (address: string) =>
        t.app.inject({
          method: 'POST', url: '/api/v1/auth/mfa/verify', headers: { 'x-forwarded-for': address },
          payload: { mfaToken: challenge.json().mfaToken, code: totpCode(totpSecret!, t.clock.now()) },
        });
      assertThrottled(await verify(flooded), /from this address/);
      assert.equal((await verify(office)).statusCode, 200);
    });
  });

  describe(`sign-in throttle without trusted proxy headers on ${backend}`, () => {
    it('counts the socket address, so forged X-Forwarded-For headers do not spread a flood', async () => {
      // A database of its own: every request here comes from 127.0.0.1, and other test files sign
      // in from there too.
      const database = await privateTestDatabase(backend);
      const t = await testApp({ db: database.db });
      try {
        const { email } = strangers();
        const results = await Promise.all(
          Array.from({ length: ADDRESS_MAX_FAILURES + 15 }, (_, i) =>
            t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'x-forwarded-for': freshAddress() }, payload: { email: email(i), password: `guess-${i}-password` } }),
          ),
        );
        assert.deepEqual(tally(results), { 401: ADDRESS_MAX_FAILURES, 429: 15 });
      } finally {
        await t.close();
        await database.drop();
      }
    });
  });
}
