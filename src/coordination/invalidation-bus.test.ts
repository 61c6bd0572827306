// Two service instances on one database and one Redis: a session ended through one instance is
// refused by the other at once, not after its cache entry expires.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import { createUser } from '../../test/support/factory.js';
import { bearer, login } from '../../test/support/clients.js';
import type { Database } from '../db/database.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('cache invalidation across instances via Redis', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let db: Database;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    db = await openTestDatabase('postgres');
    const env = { REDIS_URL, JWT_SECRET: randomBytes(32).toString('hex') };
    a = await testApp({ db, env });
    b = await testApp({ db, env });
  });
  after(async () => {
    await a.close();
    await b.close();
    await db.close();
  });

  async function statusOn(t: TestApp, token: string) {
    return (await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer({ accessToken: token }) })).statusCode;
  }

  it('ends a session on every instance as soon as it is logged out on one', async () => {
    const user = await createUser(db, { scope: 'system' });
    const session = await login(a.app, user);
    assert.equal(await statusOn(b, session.accessToken), 200); // b now caches the caller
    const out = await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: session.refreshToken } });
    assert.equal(out.statusCode, 200);
    // Pub/sub delivery takes milliseconds; the cache TTL is 10 s and the clock does not move here.
    const deadline = Date.now() + 1000;
    let status = await statusOn(b, session.accessToken);
    while (status !== 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await statusOn(b, session.accessToken);
    }
    assert.equal(status, 401);
  });
});
