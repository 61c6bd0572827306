// The agent's diagnostic log buffer: SPEC-shaped entries, batches of at most 500, entries kept on
// failure and retried, rejected batches discarded, the bound on the buffer, one shipment at a time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDiagnosticLog, type DiagnosticEntry } from './diagnostic-log.js';

const quiet = () => {};

describe('diagnostic log', () => {
  it('prints lines and buffers SPEC diagnostic entries (debug only buffered unless verbose)', async () => {
    const lines: string[] = [];
    const log = createDiagnosticLog({ agentVersion: '9.9.9', print: (l) => lines.push(l), now: () => Date.parse('2025-01-02T03:04:05.678Z') });
    log.info('heartbeat', 'beat', { n: 1 });
    log.debug('ws', 'noise');
    log.error('enroll', 'x'.repeat(20_000));
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^2025-01-02T03:04:05.678Z INFO {2}\[heartbeat\] beat \{"n":1\}$/);
    const shipped: DiagnosticEntry[][] = [];
    await log.ship(async (batch) => (shipped.push(batch), 'accepted'));
    const [info, debug, error] = shipped[0]!;
    assert.deepEqual(info, { timestamp: '2025-01-02T03:04:05.678Z', level: 'info', component: 'heartbeat', message: 'beat', fields: { n: 1 }, agentVersion: '9.9.9' });
    assert.deepEqual(debug, { timestamp: '2025-01-02T03:04:05.678Z', level: 'debug', component: 'ws', message: 'noise', agentVersion: '9.9.9' });
    assert.equal(error!.message.length, 10_000, 'cut to the service limit');
    assert.equal(log.pending(), 0);
  });

  it('ships in batches of at most 500, oldest first', async () => {
    const log = createDiagnosticLog({ agentVersion: '1', print: quiet });
    for (let i = 0; i < 1234; i++) log.info('t', `line ${i}`);
    const sizes: number[] = [];
    const firsts: string[] = [];
    const removed = await log.ship(async (batch) => {
      sizes.push(batch.length);
      firsts.push(batch[0]!.message);
      return 'accepted';
    }, 10);
    assert.equal(removed, 1234);
    assert.deepEqual(sizes, [500, 500, 234]);
    assert.deepEqual(firsts, ['line 0', 'line 500', 'line 1000']);
    assert.equal(log.pending(), 0);
  });

  it('keeps entries when sending fails or throws, and sends them again later', async () => {
    const log = createDiagnosticLog({ agentVersion: '1', print: quiet });
    log.info('t', 'a');
    log.info('t', 'b');
    assert.equal(await log.ship(async () => 'retry'), 0);
    assert.equal(await log.ship(async () => {
      throw new Error('ECONNREFUSED');
    }), 0);
    assert.equal(log.pending(), 2);
    log.info('t', 'c');
    const seen: string[] = [];
    await log.ship(async (batch) => (seen.push(...batch.map((e) => e.message)), 'accepted'));
    assert.deepEqual(seen, ['a', 'b', 'c']);
  });

  it('discards a rejected batch (and says so) instead of retrying it forever', async () => {
    const log = createDiagnosticLog({ agentVersion: '1', print: quiet });
    log.info('t', 'poison');
    assert.equal(await log.ship(async () => 'rejected'), 1);
    const seen: DiagnosticEntry[] = [];
    await log.ship(async (batch) => (seen.push(...batch), 'accepted'));
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.level, 'warn');
    assert.match(seen[0]!.message, /refused 1 log entries/);
  });

  it('is bounded: the oldest entries are dropped, and the loss is logged', async () => {
    const log = createDiagnosticLog({ agentVersion: '1', print: quiet, maxBuffered: 100 });
    for (let i = 0; i < 250; i++) log.info('t', `line ${i}`);
    assert.equal(log.pending(), 100);
    const seen: DiagnosticEntry[] = [];
    await log.ship(async (batch) => (seen.push(...batch), 'accepted'), 5);
    assert.equal(seen[0]!.message, 'line 151', 'the drop notice itself pushed one more out');
    const notice = seen.find((e) => e.component === 'logs')!;
    assert.deepEqual(notice.fields, { dropped: 151 });
    assert.equal(seen.at(-1), notice);
  });

  it('keeps entries logged while a batch is in flight, and never sends one twice', async () => {
    const log = createDiagnosticLog({ agentVersion: '1', print: quiet });
    log.info('t', 'first');
    const sent: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = log.ship(async (batch) => {
      sent.push(...batch.map((e) => e.message));
      log.info('t', 'during');
      await gate;
      return 'accepted';
    });
    const concurrent = log.ship(async (batch) => (sent.push(...batch.map((e) => e.message)), 'accepted'));
    release();
    await Promise.all([slow, concurrent]);
    assert.deepEqual(sent, ['first', 'during']);
    assert.equal(log.pending(), 0);
  });
});
