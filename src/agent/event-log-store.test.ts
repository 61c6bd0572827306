// The sample event log and the live-query operations over it, without a socket: shape and
// determinism of the sample, case-insensitive names, newest-first paging, every filter against a
// brute-force count, and not_found.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LIVE_LEVELS, type EventLogQuery, type LiveEventLogEntry } from '../live-queries/protocol.js';
import { createEventLogStore } from './event-log-store.js';
import { generateSampleEventLogs } from './sample-event-log.js';

const NOW = Date.parse('2025-03-01T12:00:00.000Z');
const options = { seed: 7, hostname: 'WS-TEST-01', now: NOW };
const samples = generateSampleEventLogs(options);
const store = createEventLogStore(samples);
const entriesOf = (name: string) => samples.find((s) => s.descriptor.name === name)!.entries;
/** Every matching entry, newest first, computed the obvious way. */
const bruteForce = (name: string, keep: (e: LiveEventLogEntry) => boolean) => [...entriesOf(name)].reverse().filter(keep);
const query = (q: Partial<EventLogQuery> & { name: string }) => store.query({ page: 1, limit: 50, ...q })!;

describe('sample event log', () => {
  it('has several logs of thousands of SPEC-shaped entries, ascending by recordId and time', () => {
    assert.deepEqual(samples.map((s) => s.descriptor.name), ['Application', 'System', 'Security', 'Setup']);
    for (const { descriptor, entries } of samples) {
      assert.ok(entries.length >= 2000 && entries.length <= 5000, `${descriptor.name}: ${entries.length} entries`);
      assert.equal(descriptor.recordCount, entries.length);
      assert.equal(descriptor.lastWriteTime, entries.at(-1)!.timeCreated);
      assert.ok(descriptor.maxSize > 0 && descriptor.retentionDays >= 0 && descriptor.displayName.length > 0);
      entries.forEach((entry, i) => {
        assert.deepEqual(Object.keys(entry).sort(), ['category', 'computer', 'eventId', 'level', 'message', 'rawXml', 'recordId', 'source', 'timeCreated', 'user']);
        assert.ok(LIVE_LEVELS.includes(entry.level));
        assert.ok(Number.isInteger(entry.recordId) && Number.isInteger(entry.eventId));
        assert.equal(new Date(entry.timeCreated).toISOString(), entry.timeCreated);
        assert.ok(Date.parse(entry.timeCreated) <= NOW);
        assert.ok(entry.user === null || typeof entry.user === 'string');
        assert.equal(entry.computer, 'WS-TEST-01');
        assert.ok(entry.message.length > 0 && !/\{[a-z]+\}/.test(entry.message), entry.message);
        assert.match(entry.rawXml!, new RegExp(`<EventRecordID>${entry.recordId}</EventRecordID>`));
        if (i > 0) {
          assert.equal(entry.recordId, entries[i - 1]!.recordId + 1);
          assert.ok(entry.timeCreated >= entries[i - 1]!.timeCreated);
        }
      });
    }
    // Realistic variety: every level and several sources occur somewhere.
    const all = samples.flatMap((s) => s.entries);
    for (const level of LIVE_LEVELS) assert.ok(all.some((e) => e.level === level), level);
    assert.ok(new Set(all.map((e) => e.source)).size >= 20);
  });

  it('is deterministic: the same seed, hostname and time give the same entries; another seed does not', () => {
    assert.deepEqual(generateSampleEventLogs(options), samples);
    const other = generateSampleEventLogs({ ...options, seed: 8 });
    assert.notDeepEqual(other.map((s) => s.entries.slice(0, 20)), samples.map((s) => s.entries.slice(0, 20)));
    // Pinned values, so an accidental change to the generator shows up here.
    const newest = store.query({ name: 'System', page: 1, limit: 1 })!.events[0]!;
    assert.equal(newest.recordId, entriesOf('System').at(-1)!.recordId);
    assert.equal(newest.recordId, 112_904 + 4100 - 1);
  });
});

describe('event log store', () => {
  it('lists descriptors and gets one by a case-insensitive name', () => {
    assert.deepEqual(store.list(), samples.map((s) => s.descriptor));
    assert.deepEqual(store.get('sEcUrItY'), samples[2]!.descriptor);
    assert.deepEqual(store.get('application'), samples[0]!.descriptor);
    assert.equal(store.get('Sec'), null);
    assert.equal(store.get('Forwarded Events'), null);
    // Callers cannot corrupt the store through a returned descriptor.
    store.get('Setup')!.recordCount = -1;
    assert.equal(store.get('Setup')!.recordCount, entriesOf('Setup').length);
  });

  it('queries newest first with page and limit, total and hasMore', () => {
    const all = bruteForce('Application', () => true);
    const first = query({ name: 'APPLICATION', limit: 50 });
    assert.equal(first.total, all.length);
    assert.equal(first.hasMore, true);
    assert.deepEqual(first.events, all.slice(0, 50));
    const second = query({ name: 'application', page: 2, limit: 50 });
    assert.deepEqual(second.events, all.slice(50, 100));
    assert.deepEqual([...first.events, ...second.events], query({ name: 'Application', limit: 100 }).events);

    const lastPage = Math.ceil(all.length / 500);
    const last = query({ name: 'Application', page: lastPage, limit: 500 });
    assert.deepEqual(last.events, all.slice((lastPage - 1) * 500));
    assert.equal(last.hasMore, false);
    const beyond = query({ name: 'Application', page: lastPage + 1, limit: 500 });
    assert.deepEqual([beyond.events, beyond.total, beyond.hasMore], [[], all.length, false]);
    const exact = query({ name: 'Setup', limit: entriesOf('Setup').length });
    assert.equal(exact.hasMore, false);
    assert.equal(exact.events.length, entriesOf('Setup').length);
  });

  it('filters by level, by source (case-insensitive, exact) and by eventId', () => {
    for (const level of LIVE_LEVELS) {
      const result = query({ name: 'System', level, limit: 500 });
      const expected = bruteForce('System', (e) => e.level === level);
      assert.equal(result.total, expected.length, level);
      assert.deepEqual(result.events, expected.slice(0, 500));
    }
    const scm = query({ name: 'System', source: 'service control manager', limit: 500 });
    const expectedScm = bruteForce('System', (e) => e.source === 'Service Control Manager');
    assert.ok(expectedScm.length > 100);
    assert.equal(scm.total, expectedScm.length);
    assert.deepEqual(scm.events, expectedScm.slice(0, 500));
    assert.equal(query({ name: 'System', source: 'Service Control' }).total, 0, 'no partial match');

    const logons = query({ name: 'Security', eventId: 4624, limit: 10 });
    assert.equal(logons.total, bruteForce('Security', (e) => e.eventId === 4624).length);
    assert.ok(logons.events.length === 10 && logons.events.every((e) => e.eventId === 4624));
    assert.equal(query({ name: 'Security', eventId: 1 }).total, 0);
  });

  it('filters by startTime and endTime, both inclusive, whatever the offset notation', () => {
    const entries = entriesOf('Security');
    const pivot = entries[1000]!;
    const at = pivot.timeCreated;
    const same = query({ name: 'Security', startTime: at, endTime: at, limit: 500 });
    assert.ok(same.events.some((e) => e.recordId === pivot.recordId), 'an entry at exactly both bounds is included');
    assert.ok(same.events.every((e) => e.timeCreated === at));

    const start = entries[2000]!.timeCreated;
    const end = entries[2600]!.timeCreated;
    const between = query({ name: 'Security', startTime: start, endTime: end, limit: 500, page: 1 });
    const expected = bruteForce('Security', (e) => e.timeCreated >= start && e.timeCreated <= end);
    assert.equal(between.total, expected.length);
    assert.deepEqual(between.events, expected.slice(0, 500));
    assert.equal(between.hasMore, expected.length > 500);

    // The same instant written with a +02:00 offset.
    const shifted = new Date(Date.parse(start) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    assert.equal(query({ name: 'Security', startTime: shifted }).total, bruteForce('Security', (e) => e.timeCreated >= start).length);
    assert.equal(query({ name: 'Security', endTime: '2000-01-01T00:00:00Z' }).total, 0);
  });

  it('combines filters with AND', () => {
    const startTime = entriesOf('System')[1500]!.timeCreated;
    const result = query({ name: 'system', level: 'information', source: 'SERVICE CONTROL MANAGER', eventId: 7036, startTime, limit: 500 });
    const expected = bruteForce('System', (e) => e.level === 'information' && e.source === 'Service Control Manager' && e.eventId === 7036 && e.timeCreated >= startTime);
    assert.ok(expected.length > 0);
    assert.equal(result.total, expected.length);
    assert.deepEqual(result.events, expected.slice(0, 500));
  });

  it('finds one record by recordId in its own log, else null (not_found)', () => {
    const entry = entriesOf('Setup')[42]!;
    assert.deepEqual(store.record('setup', entry.recordId), entry);
    assert.equal(store.record('Setup', entriesOf('Setup').at(-1)!.recordId + 1), null);
    assert.equal(store.record('Application', entry.recordId), null, 'another log does not hold it');
    assert.equal(store.record('Nope', entry.recordId), null);
    assert.equal(store.query({ name: 'Nope', page: 1, limit: 50 }), null);
  });
});
