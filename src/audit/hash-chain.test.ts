// Fixed vectors for the canonical form and checksum (API.md §8). The expected values were computed
// outside this code base (Python's json with sorted keys and compact separators, which coincides
// with RFC 8785 for these inputs), so an external verifier can reproduce them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { canonicalJson, canonicalPayload, checkLink, checksumOf, sealRows, type ChainFields } from './hash-chain.js';

const first: ChainFields = {
  orgId: '3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f',
  seq: 1,
  timestamp: '2026-01-02T03:04:05.678Z',
  actorType: 'user',
  actorId: '9b2e7c1a-1111-4222-8333-444455556666',
  actorEmail: 'tech@example.com',
  action: 'user.login',
  resourceType: 'user',
  resourceId: '9b2e7c1a-1111-4222-8333-444455556666',
  resourceName: 'Tech',
  details: {},
  ipAddress: '203.0.113.7',
  userAgent: 'curl/8.5',
  result: 'success',
  errorMessage: null,
  prevChecksum: null,
};
const FIRST_CHECKSUM = '651efb999836ffbbfe635107b5d938debbeeb7f10841b0bb04a360fcf7f78cdd';

const second: ChainFields = {
  ...first,
  seq: 2,
  action: 'site.update',
  resourceType: 'site',
  resourceName: 'Zürich — HQ 🏢',
  resourceId: null,
  actorEmail: null,
  actorType: 'system',
  actorId: null,
  details: {
    changedFields: ['name', 'address'],
    before: { name: 'Zurich', n: -7, ratio: 3.25, ok: true },
    after: { name: 'Zürich — HQ 🏢', nested: { deep: [1, null, 'line\nbreak', { z: 0, a: false }] } },
    rawActorId: 'cron',
  },
  ipAddress: null,
  userAgent: null,
  result: 'failure',
  errorMessage: 'quota "exceeded"',
  prevChecksum: FIRST_CHECKSUM,
};
const SECOND_CHECKSUM = '3291af54294cde1948c8a67d640eb037f724173de9696636a613492ec86b6a15';

describe('audit hash chain', () => {
  it('produces the fixed checksum for a plain row', () => {
    assert.equal(checksumOf(first), FIRST_CHECKSUM);
  });

  it('sorts keys at every depth and keeps unicode, numbers, nulls and escapes as RFC 8785 says', () => {
    assert.equal(
      canonicalPayload(second),
      '{"action":"site.update","actorEmail":null,"actorId":null,"actorType":"system","details":{"after":{"name":"Zürich — HQ 🏢","nested":{"deep":[1,null,"line\\nbreak",{"a":false,"z":0}]}},"before":{"n":-7,"name":"Zurich","ok":true,"ratio":3.25},"changedFields":["name","address"],"rawActorId":"cron"},"errorMessage":"quota \\"exceeded\\"","ipAddress":null,"orgId":"3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f","prevChecksum":"651efb999836ffbbfe635107b5d938debbeeb7f10841b0bb04a360fcf7f78cdd","resourceId":null,"resourceName":"Zürich — HQ 🏢","resourceType":"site","result":"failure","seq":2,"timestamp":"2026-01-02T03:04:05.678Z","userAgent":null,"v":1}',
    );
    assert.equal(checksumOf(second), SECOND_CHECKSUM);
  });

  it('writes every chain field once, in RFC 8785 key order', () => {
    const keys = Object.keys(JSON.parse(canonicalPayload(second)) as object);
    assert.deepEqual(keys, [...keys].sort());
    assert.deepEqual(new Set(keys), new Set([...Object.keys(second), 'v']));
  });

  it('serialises numbers the ECMAScript way (JCS)', () => {
    const text = canonicalPayload({ ...first, details: { big: 1e21, small: 1e-7, third: 1 / 3, negZero: -0 } });
    assert.match(text, /"details":\{"big":1e\+21,"negZero":0,"small":1e-7,"third":0\.3333333333333333\}/);
  });

  it('writes exactly what the general RFC 8785 canonicaliser writes, for any JSON and any text', () => {
    // The payload is assembled by hand for speed; the reference canonicalises the whole object.
    // Well-formed text, as stored (a lone surrogate is refused by the canonicaliser, replaced by the recorder).
    const text = fc.oneof(fc.string({ unit: 'binary' }).filter((t) => t.isWellFormed()), fc.string({ unit: 'grapheme' }),
      fc.constantFrom('"', '\\', '\n', '\u2028', '\u007f', '🏢'));
    const nullable = fc.option(text, { nil: null });
    const details = fc.dictionary(fc.oneof(fc.string(), text), fc.jsonValue());
    fc.assert(fc.property(details, fc.jsonValue(), (value, any) => {
      assert.equal(canonicalJson(value), canonicalize(value));
      assert.equal(canonicalJson(any), canonicalize(any));
    }), { numRuns: 500 });
    fc.assert(fc.property(nullable, nullable, text, details, fc.integer({ min: 1, max: 2 ** 40 }), (email, message, name, value, seq) => {
      const row = { ...second, actorEmail: email, errorMessage: message, resourceName: name, details: value, seq };
      assert.equal(canonicalPayload(row), canonicalize({ v: 1, ...row }));
    }), { numRuns: 500 });
  });

  it('seals pending rows after a head, each linking to the one before', () => {
    const { seq: _s, prevChecksum: _p, ...pendingFirst } = first;
    const { seq: _s2, prevChecksum: _p2, ...pendingSecond } = second;
    const sealed = sealRows({ seq: 0, checksum: null }, [pendingFirst, pendingSecond]);
    assert.deepEqual(sealed, [
      { seq: 1, prevChecksum: null, checksum: FIRST_CHECKSUM },
      { seq: 2, prevChecksum: FIRST_CHECKSUM, checksum: SECOND_CHECKSUM },
    ]);
  });

  it('names how a link breaks', () => {
    const row1 = { ...first, checksum: FIRST_CHECKSUM };
    const row2 = { ...second, checksum: SECOND_CHECKSUM };
    assert.equal(checkLink(null, row1), null);
    assert.equal(checkLink({ seq: 1, checksum: FIRST_CHECKSUM }, row2), null);
    assert.equal(checkLink({ seq: 1, checksum: FIRST_CHECKSUM }, { ...row2, action: 'site.delete' }), 'checksum_mismatch');
    assert.equal(checkLink({ seq: 1, checksum: 'f'.repeat(64) }, row2), 'prev_checksum_mismatch');
    assert.equal(checkLink({ seq: 1, checksum: FIRST_CHECKSUM }, { ...row2, seq: 3 }), 'seq_gap');
    assert.equal(checkLink(null, row2), 'seq_gap');
  });
});
