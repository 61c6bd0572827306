// DESIGN.md §3: a request holds at most one pooled connection at a time, so more concurrent
// requests than pool slots queue and finish instead of deadlocking.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../db/database.js';
import { testApp } from '../../test/support/app.js';
import { createUser } from '../../test/support/factory.js';
import { bearer, login } from '../../test/support/clients.js';

describe('pool pressure', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('serves 60 concurrent authenticated requests through a pool of 2 connections', async () => {
    const db = await openDatabase({ url: process.env.TEST_DATABASE_URL!, pgliteDir: 'memory://', poolSize: 2 });
    const t = await testApp({ db });
    try {
      const users = await Promise.all(Array.from({ length: 6 }, () => createUser(db, { scope: 'system' })));
      const sessions = await Promise.all(users.map((u) => login(t.app, u)));
      // Every request misses the caller cache once (its own transaction), then lists users (another).
      const responses = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          t.app.inject({ method: 'GET', url: '/api/v1/users?limit=5', headers: bearer(sessions[i % sessions.length]!) }),
        ),
      );
      assert.deepEqual([...new Set(responses.map((r) => r.statusCode))], [200]);
    } finally {
      await t.close();
      await db.close();
    }
  });
});
