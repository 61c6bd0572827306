// The sliding-window maths, directly: eviction at exactly one hour, the ring growing past its first
// capacity, refusals that record nothing, and a lowered limit needing several requests to leave.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryRateLimitStore, SlidingLog, WINDOW_MS } from './rate-limiter.js';
import { generateKey, malformedKeyReason } from './key-material.js';

describe('sliding window', () => {
  it('admits up to the limit within any hour and frees each slot exactly an hour after its request', () => {
    const log = new SlidingLog();
    const t0 = 1_000_000;
    assert.deepEqual(log.step(2, t0, true), { allowed: true, limit: 2, remaining: 1, resetAt: t0 + WINDOW_MS });
    assert.deepEqual(log.step(2, t0 + 1000, true), { allowed: true, limit: 2, remaining: 0, resetAt: t0 + WINDOW_MS });
    assert.deepEqual(log.step(2, t0 + 2000, true), { allowed: false, limit: 2, remaining: 0, resetAt: t0 + WINDOW_MS });
    assert.equal(log.size, 2, 'a refused request is not recorded');
    assert.equal(log.step(2, t0 + WINDOW_MS - 1, true).allowed, false);
    const freed = log.step(2, t0 + WINDOW_MS, true);
    assert.deepEqual(freed, { allowed: true, limit: 2, remaining: 0, resetAt: t0 + 1000 + WINDOW_MS });
  });

  it('keeps every request past the ring’s first capacity, in order', () => {
    const log = new SlidingLog();
    for (let i = 0; i < 1000; i++) assert.equal(log.step(1000, i, true).allowed, true);
    assert.equal(log.step(1000, 1000, true).allowed, false);
    for (let i = 0; i < 1000; i++) assert.equal(log.at(i), i);
    // Half leave, half stay, and the ring wraps as new ones come in.
    for (let i = 0; i < 500; i++) assert.equal(log.step(1000, WINDOW_MS + i, true).allowed, true);
    assert.equal(log.size, 1000);
    assert.equal(log.at(0), 500);
    assert.equal(log.at(999), WINDOW_MS + 499);
  });

  it('after a lowered limit, says when enough requests have left for one more', () => {
    const log = new SlidingLog();
    for (let i = 0; i < 5; i++) log.step(10, i * 1000, true);
    const refused = log.step(2, 10_000, true);
    assert.equal(refused.allowed, false);
    assert.equal(refused.resetAt, 3000 + WINDOW_MS, 'requests 0, 1 and 2 must leave before a third fits under 2');
  });

  it('peeks without recording, per key', async () => {
    const store = createMemoryRateLimitStore();
    assert.deepEqual(await store.peek('a', 3, 0), { allowed: true, limit: 3, remaining: 3, resetAt: WINDOW_MS });
    await store.take('a', 3, 1, 0);
    assert.equal((await store.peek('a', 3, 10)).remaining, 2);
    assert.equal((await store.take('b', 3, 1, 10) as { remaining: number }).remaining, 2);
  });
});

describe('key material', () => {
  it('is svc_ and 32 base64url characters, with a 12-character prefix', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { key, keyPrefix, keyHash } = generateKey();
      assert.match(key, /^svc_[A-Za-z0-9_-]{32}$/);
      assert.equal(keyPrefix, key.slice(0, 12));
      assert.match(keyHash, /^[0-9a-f]{64}$/);
      assert.equal(malformedKeyReason(key), null);
      seen.add(key);
    }
    assert.equal(seen.size, 200);
    assert.equal(malformedKeyReason('sk_live_x'), 'API key must start with svc_');
    assert.equal(malformedKeyReason(`svc_${'a'.repeat(31)}`), 'API key is not valid');
  });
});
