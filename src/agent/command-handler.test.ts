// Command frames in, command_result replies out (API.md §7): every command, not_found, invalid
// payloads and unknown commands answered `failed`, malformed frames ignored, oversized results.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_FRAME_BYTES, type CommandResultMessage } from '../live-queries/protocol.js';
import { encodeReply, handleCommandFrame } from './command-handler.js';
import { createEventLogStore } from './event-log-store.js';
import { generateSampleEventLogs } from './sample-event-log.js';

const samples = generateSampleEventLogs({ seed: 3, hostname: 'H', now: Date.parse('2025-01-01T00:00:00Z') });
const store = createEventLogStore(samples);

function reply(command: string, payload?: unknown): CommandResultMessage {
  const outcome = handleCommandFrame(store, JSON.stringify({ type: 'command', id: 'c-1', command, ...(payload === undefined ? {} : { payload }) }));
  assert.equal(outcome.kind, 'reply');
  if (outcome.kind !== 'reply') throw new Error('unreachable');
  assert.equal(outcome.reply.id, 'c-1');
  assert.equal(outcome.reply.type, 'command_result');
  return outcome.reply;
}
const completed = (command: string, payload?: unknown) => {
  const r = reply(command, payload);
  assert.equal(r.status, 'completed', JSON.stringify(r));
  return r.result as Record<string, unknown>;
};
const failedWith = (command: string, payload: unknown, error: string) => assert.deepEqual(reply(command, payload), { type: 'command_result', id: 'c-1', status: 'failed', error });

describe('command handler', () => {
  it('answers eventlogs.list and eventlogs.get', () => {
    assert.deepEqual(completed('eventlogs.list', {}), { logs: samples.map((s) => s.descriptor) });
    assert.deepEqual(completed('eventlogs.list'), { logs: samples.map((s) => s.descriptor) }, 'payload may be omitted');
    assert.deepEqual(completed('eventlogs.get', { name: 'system' }), samples[1]!.descriptor);
    failedWith('eventlogs.get', { name: 'Nope' }, 'not_found');
  });

  it('answers eventlogs.query with {events, total, hasMore}, honouring filters and paging', () => {
    const result = completed('eventlogs.query', { name: 'Security', page: 2, limit: 5, level: 'information', source: 'microsoft-windows-security-auditing', eventId: 4624 });
    assert.deepEqual(Object.keys(result).sort(), ['events', 'hasMore', 'total']);
    const events = result.events as { eventId: number; level: string }[];
    assert.equal(events.length, 5);
    assert.ok(events.every((e) => e.eventId === 4624 && e.level === 'information'));
    assert.deepEqual(result, store.query({ name: 'Security', page: 2, limit: 5, level: 'information', source: 'microsoft-windows-security-auditing', eventId: 4624 }));
    // Defaults, digit strings as a query string carries them, and null filters treated as absent.
    assert.deepEqual(completed('eventlogs.query', { name: 'Setup' }), store.query({ name: 'Setup', page: 1, limit: 50 }));
    assert.deepEqual(
      completed('eventlogs.query', { name: 'Setup', page: '3', limit: '10', eventId: '2', level: null, startTime: null }),
      store.query({ name: 'Setup', page: 3, limit: 10, eventId: 2 }),
    );
    failedWith('eventlogs.query', { name: 'Nope', page: 1, limit: 10 }, 'not_found');
  });

  it('answers eventlogs.record, or not_found', () => {
    const entry = samples[0]!.entries[10]!;
    assert.deepEqual(completed('eventlogs.record', { name: 'Application', recordId: entry.recordId }), entry);
    assert.deepEqual(completed('eventlogs.record', { name: 'application', recordId: String(entry.recordId) }), entry);
    failedWith('eventlogs.record', { name: 'Application', recordId: 1 }, 'not_found');
    failedWith('eventlogs.record', { name: 'Nope', recordId: entry.recordId }, 'not_found');
  });

  it('answers invalid payloads and unknown commands with failed', () => {
    for (const payload of [
      { name: 'Setup', page: 0, limit: 10 },
      { name: 'Setup', page: 1, limit: 0 },
      { name: 'Setup', page: 1, limit: 501 },
      { name: 'Setup', page: 1.5, limit: 10 },
      { name: 'Setup', page: 1, limit: 10, level: 'info' },
      { name: 'Setup', page: 1, limit: 10, source: 7 },
      { name: 'Setup', page: 1, limit: 10, startTime: 'yesterday' },
      { name: 'Setup', page: 1, limit: 10, endTime: '2025-13-45T00:00:00Z' },
      { name: 'Setup', page: 1, limit: 10, eventId: 'x' },
      { page: 1, limit: 10 },
      { name: '', page: 1, limit: 10 },
    ]) {
      failedWith('eventlogs.query', payload, 'invalid_payload');
    }
    failedWith('eventlogs.get', {}, 'invalid_payload');
    failedWith('eventlogs.get', [], 'invalid_payload');
    failedWith('eventlogs.record', { name: 'Setup', recordId: -1 }, 'invalid_payload');
    failedWith('eventlogs.record', { name: 'Setup' }, 'invalid_payload');
    failedWith('eventlogs.clear', {}, 'unknown_command');
    failedWith('shell.exec', { cmd: 'rm -rf /' }, 'unknown_command');
  });

  it('ignores frames it cannot answer', () => {
    for (const frame of ['not json', '[1,2]', 'null', '42', '{"type":"command","command":"eventlogs.list"}', '{"type":"command","id":"","command":"eventlogs.list"}', '{"type":"hello","id":"x"}', '{"id":"x","command":"eventlogs.list"}']) {
      const outcome = handleCommandFrame(store, frame);
      assert.equal(outcome.kind, 'ignored', frame);
    }
  });

  it('turns a result too large for one frame into a failure', () => {
    const small: CommandResultMessage = { type: 'command_result', id: 'a', status: 'completed', result: { x: 1 } };
    assert.deepEqual(JSON.parse(encodeReply(small)), small);
    const huge: CommandResultMessage = { type: 'command_result', id: 'b', status: 'completed', result: 'x'.repeat(MAX_FRAME_BYTES) };
    assert.deepEqual(JSON.parse(encodeReply(huge)), { type: 'command_result', id: 'b', status: 'failed', error: 'result_too_large' });
    // The largest legal query (500 entries with raw XML) fits comfortably.
    const biggest = reply('eventlogs.query', { name: 'Security', page: 1, limit: 500 });
    assert.ok(encodeReply(biggest).length < MAX_FRAME_BYTES / 2);
  });
});
