// What a technician tries when a destination misbehaves: a test event sent now (its answer shown as
// delivered or not), and a replay of one chain from a seq (API.md §9).
import { useState } from 'react';
import { api, call } from '../../api/client';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { Gated, type WriteGate } from '../../ui/write-gate';
import { orgLabel, type Destination, type Directory, type TestResult } from './destination';
import { Notice } from './parts';
import { useNotice } from '../../ui/notice';

export function TestEvent({ destination, gate }: { destination: Destination; gate: WriteGate }) {
  const [result, setResult] = useState<TestResult | null>(null);
  const send = useAction(async () => {
    setResult(null);
    setResult(await call(api.POST('/api/v1/event-destinations/{id}/test', { params: { path: { id: destination.id } } })));
  });
  return (
    <section className="destinations-section" aria-labelledby="test-title">
      <h2 id="test-title">Test event</h2>
      <p className="hint">Sends one <code>destination.test</code> event now, outside the audit chains, and reports the receiver’s answer.</p>
      <Gated allowed={gate.allowed} label="Send test event">
        <button type="button" aria-label={`Send test event to “${destination.name}”`} disabled={send.pending} onClick={() => void send.run()}>
          {send.pending ? 'Sending…' : 'Send test event'}
        </button>
      </Gated>
      <ErrorMessage error={send.error} />
      {result && <Notice tone={result.delivered ? 'ok' : 'bad'} {...testOutcome(result)} />}
    </section>
  );
}

function testOutcome(r: TestResult): { lead: string; message: string } {
  const status = r.responseStatus === null ? 'no HTTP answer' : `HTTP ${r.responseStatus}`;
  const took = `${r.durationMs.toLocaleString()} ms`;
  if (r.delivered) return { lead: 'Test event delivered.', message: `The receiver answered ${status} in ${took}.` };
  return { lead: 'Test event not delivered.', message: `${r.error ?? 'The receiver refused it.'} (${status}, after ${took})` };
}

/**
 * Replay: an organization's destination has one chain; a partner-wide one a chain per organization
 * of the partner; a platform-wide one those and the platform chain (orgId null).
 */
export function ReplayForm({ destination, directory, gate }: { destination: Destination; directory: Directory | undefined; gate: WriteGate }) {
  const [chain, setChain] = useState('');
  const [fromSeq, setFromSeq] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useNotice();
  const several = destination.orgId === null;
  const orgs = (directory?.orgs ?? []).filter((o) => destination.partnerId === null || o.partnerId === destination.partnerId);
  const replay = useAction(async (orgId: string | null | undefined, seq: number) => {
    await call(api.POST('/api/v1/event-destinations/{id}/replay', {
      params: { path: { id: destination.id } },
      body: orgId === undefined ? { fromSeq: seq } : { orgId, fromSeq: seq },
    }));
    const which = orgId === undefined ? orgLabel(directory, destination.orgId ?? '') : orgId === null ? 'the platform' : orgLabel(directory, orgId);
    setDone(`Replay requested: the audit events of ${which} from seq ${seq} are sent again, in order, before newer ones.`);
  });
  const submit = async () => {
    setDone(null);
    const seq = Number(fromSeq);
    const problem = !/^\d+$/.test(fromSeq.trim()) || seq < 1 || !Number.isSafeInteger(seq) ? 'Enter a whole number from 1.' : undefined;
    setError(problem);
    if (problem) return;
    if (several && chain === '') return;
    await replay.run(several ? (chain === 'platform' ? null : chain) : undefined, seq);
  };

  return (
    <section className="destinations-section" aria-labelledby="replay-title">
      <h2 id="replay-title">Replay</h2>
      <form className="filters" aria-labelledby="replay-title" noValidate onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        {several && (
          <Field label="Chain" error={replay.error?.forField('orgId')}>
            <select value={chain} onChange={(e) => setChain(e.target.value)} required>
              <option value="">Choose a chain…</option>
              {destination.partnerId === null && <option value="platform">The platform’s own chain</option>}
              {orgs.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
            </select>
          </Field>
        )}
        <Field label="From seq" error={error ?? replay.error?.forField('fromSeq')} hint="The seq of the first audit entry to send again (the audit log and the delivery log show it).">
          <input type="number" inputMode="numeric" min={1} step={1} value={fromSeq} onChange={(e) => setFromSeq(e.target.value)} required />
        </Field>
        <Gated allowed={gate.allowed} label="Replay">
          <button type="submit" aria-label={`Replay to “${destination.name}”`} disabled={replay.pending || (several && chain === '')}>
            {replay.pending ? 'Requesting…' : 'Replay'}
          </button>
        </Gated>
      </form>
      <ErrorMessage error={replay.error} />
      <Notice message={done} />
    </section>
  );
}
