// The cleanup of ended sessions, old sign-in attempts, and old "forgot password" requests and reset tokens:
// what goes, what stays (live sessions, their spent refresh tokens, sessions still in their grace
// week), on both database backends.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backends, privateTestDatabase, testApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser } from '../../test/support/factory.js';
import { login } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';

const DAY = 24 * 3600 * 1000;

for (const backend of backends()) {
  describe(`identity housekeeping (${backend})`, () => {
    it('removes sessions a week after they ended and day-old sign-in attempts, and nothing live', async () => {
      // A database of its own: the cleanup works by age across every tenant, and this test moves its
      // clock 40 days on, so on the shared database it would remove other test files' attempts.
      const database = await privateTestDatabase(backend);
      const t = await testApp({ db: database.db });
      try {
        const org = await createOrg(t.db, (await createPartner(t.db)).id);
        const user = await createUser(t.db, { scope: 'organization', orgId: org.id });
        const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url: `/api/v1/auth/${url}`, payload });
        const sessionIds = async () =>
          withTenant(t.db, SYSTEM_SCOPE, async (tx) => (await tx.query<{ id: string }>(`select id from sessions where user_id = $1 order by created_at`, [user.id])).rows.map((r) => r.id));
        const attempts = async () =>
          withTenant(t.db, SYSTEM_SCOPE, async (tx) => (await tx.query<{ n: number }>(`select count(*)::int as n from login_attempts where email_key like '%@nowhere.example'`)).rows[0]!.n);

        // Day 0: a session that stays signed in, one that signs out, and a failed sign-in.
        await login(t.app, user);
        const [kept] = await sessionIds();
        const signedOut = await login(t.app, user);
        assert.equal((await post('logout', { refreshToken: signedOut.refreshToken })).statusCode, 200);
        assert.equal((await post('login', { email: 'ghost@nowhere.example', password: 'wrong-password-1' })).statusCode, 401);
        assert.equal(await attempts(), 1);
        // A reset asked for the user (its token is made after the answer) and one for nobody.
        assert.equal((await post('password/forgot', { email: user.email })).statusCode, 202);
        assert.equal((await post('password/forgot', { email: 'ghost@nowhere.example' })).statusCode, 202);
        const resetRows = async () => withTenant(t.db, SYSTEM_SCOPE, async (tx) =>
          (await tx.query<{ tokens: number; requests: number }>(`select (select count(*)::int from password_resets) as tokens, (select count(*)::int from password_reset_requests) as requests`)).rows[0]!);
        for (let i = 0; i < 200 && (await resetRows()).tokens === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.deepEqual(await resetRows(), { tokens: 1, requests: 2 });
        // It is counted under the client's address as well, and audited once: the address's first in the window.
        const counted = await withTenant(t.db, SYSTEM_SCOPE, async (tx) =>
          (await tx.query<{ client_key: string }>(`select client_key from login_attempts where email_key = 'ghost@nowhere.example'`)).rows);
        assert.deepEqual(counted, [{ client_key: '127.0.0.1' }]);
        const audited = await withTenant(t.db, SYSTEM_SCOPE, async (tx) =>
          (await tx.query<{ n: number }>(`select count(*)::int as n from audit_logs where actor_email = 'ghost@nowhere.example'`)).rows[0]!.n);
        assert.equal(audited, 1);

        // Day 8: the signed-out session is a week past its end; the failed attempt a week past its window.
        t.clock.advance(8 * DAY);
        const fresh = await login(t.app, user);
        const rotated = (await post('refresh', { refreshToken: fresh.refreshToken })).json();
        assert.deepEqual(await t.app.identityHousekeeping.runOnce(), { sessions: 1, loginAttempts: 1, resetRequests: 2, resetTokens: 1 });
        assert.deepEqual(await resetRows(), { tokens: 0, requests: 0 });
        const afterFirstRun = await sessionIds();
        assert.equal(afterFirstRun.length, 2);
        assert.equal(afterFirstRun[0], kept);
        assert.equal(await attempts(), 0);
        // The live session works, and its spent refresh token still gives a copy away.
        assert.equal((await post('refresh', { refreshToken: rotated.refreshToken })).statusCode, 200);
        const reused = await post('refresh', { refreshToken: fresh.refreshToken });
        assert.equal(reused.statusCode, 401);
        assert.match(reused.json().detail, /already used/);

        // Day 40: the first session expired on day 30 (ten days ago) and goes; the one from day 8,
        // revoked by that reuse 32 days ago, goes too. One that ended today is kept for its week.
        t.clock.advance(32 * DAY);
        const later = await login(t.app, user);
        const justEnded = await login(t.app, user);
        assert.equal((await post('logout', { refreshToken: justEnded.refreshToken })).statusCode, 200);
        assert.deepEqual(await t.app.identityHousekeeping.runOnce(), { sessions: 2, loginAttempts: 0, resetRequests: 0, resetTokens: 0 });
        const remaining = await sessionIds();
        assert.equal(remaining.length, 2);
        assert.ok(!remaining.includes(kept!) && !afterFirstRun.some((id) => remaining.includes(id)));
        assert.equal((await post('refresh', { refreshToken: later.refreshToken })).statusCode, 200);
      } finally {
        await t.close();
        await database.drop();
      }
    });
  });
}
