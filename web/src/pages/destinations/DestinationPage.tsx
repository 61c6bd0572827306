// One event destination: its details and trouble, edit, enable/disable, rotate the webhook secret
// (the new one shown once), delete, a test event, replay, and the delivery log. The destination is
// read again every few seconds, as its status and last error change with deliveries.
import { useRef, useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { useCan } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime } from '../../ui/format';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useAction, useLoad, usePolling } from '../../ui/use-load';
import { Gated, WriteGateNote, useWriteGate, type WriteGate } from '../../ui/write-gate';
import { NotAvailable, RouteNotice } from '../tenancy/page-notices';
import { useDirectory } from './coverage';
import { DeliveryLog } from './deliveries';
import { ROTATED_WARNING, RESULT_LABELS, coverageLabel, type Destination, type Directory } from './destination';
import { DestinationEditForm } from './destination-form';
import { ReplayForm, TestEvent } from './destination-tools';
import { DestinationStatus, Notice, OneTimeSecret, PageHeading } from './parts';
import { useNotice } from '../../ui/notice';

const REFRESH_MS = 5000;

export function DestinationPage() {
  const can = useCan();
  const { destinationId = '' } = useParams();
  if (!can('organizations:read')) {
    return <NotAvailable title="Event destination">Event destinations are not available for your account: it lacks the organizations:read permission.</NotAvailable>;
  }
  return <DestinationDetails key={destinationId} id={destinationId} />;
}

function DestinationDetails({ id }: { id: string }) {
  const location = useLocation();
  const [arrived] = useState(() => Boolean((location.state as { notice?: string } | null)?.notice));
  const loaded = useLoad(() => call(api.GET('/api/v1/event-destinations/{id}', { params: { path: { id } } })), [id]);
  usePolling(loaded.reload, REFRESH_MS);
  const directory = useDirectory();
  const gate = useWriteGate('event destinations');

  return (
    <main id="main" className="page destinations">
      <p><Link to="/destinations">← Event destinations</Link></p>
      {loaded.error && !loaded.data && <h1>Event destination</h1>}
      <Loadable state={loaded}>
        {(d) => <DestinationView destination={d} directory={directory.data} gate={gate} arrived={arrived} reload={loaded.reload} />}
      </Loadable>
    </main>
  );
}

function DestinationView({ destination: d, directory, gate, arrived, reload }: {
  destination: Destination;
  directory: Directory | undefined;
  gate: WriteGate;
  arrived: boolean;
  reload: () => void;
}) {
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [done, setDone] = useNotice();
  const [secret, setSecret] = useState<string | null>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const quoted = `“${d.name}”`;
  const act = useAction(async (run: () => Promise<string | void>) => {
    setDone(null);
    const said = await run();
    if (said) setDone(said);
    reload();
  });
  const toggle = () => act.run(async () => {
    const saved = await call(api.PATCH('/api/v1/event-destinations/{id}', { params: { path: { id: d.id } }, body: { enabled: !d.enabled } }));
    return saved.enabled
      ? `${quoted} is enabled: delivery resumes with the events it has not received yet.`
      : `${quoted} is disabled: nothing is sent to it until it is enabled again.`;
  });
  const rotate = () => act.run(async () => {
    const rotated = await call(api.POST('/api/v1/event-destinations/{id}/rotate-secret', { params: { path: { id: d.id } } }));
    setSecret(rotated.secret);
  });
  const remove = () => act.run(async () => {
    await call(api.DELETE('/api/v1/event-destinations/{id}', { params: { path: { id: d.id } } }));
    void navigate('/destinations', { state: { notice: `Destination ${quoted} deleted.` } });
  });
  const closeEditor = (message: string | null) => {
    setEditing(false);
    if (message) setDone(message);
    else requestAnimationFrame(() => editButton.current?.focus());
  };

  if (secret) {
    return (
      <>
        <h1>{d.name}</h1>
        <OneTimeSecret
          title={`New signing secret for ${quoted}`}
          secret={secret}
          warning={ROTATED_WARNING}
          onDone={() => { setSecret(null); setDone(`The signing secret of ${quoted} is rotated; the previous one also signs for 24 hours.`); }}
        />
      </>
    );
  }

  return (
    <>
      <div className="destinations-heading">
        <PageHeading focus={arrived}>{d.name}</PageHeading>
        <div className="actions">
          <Gated allowed={gate.allowed} label="Edit">
            <button ref={editButton} type="button" aria-label={`Edit ${quoted}`} aria-expanded={editing} onClick={() => { setDone(null); setEditing(!editing); }}>Edit</button>
          </Gated>
          <Gated allowed={gate.allowed} label={d.enabled ? 'Disable' : 'Enable'}>
            <button type="button" aria-label={`${d.enabled ? 'Disable' : 'Enable'} ${quoted}`} disabled={act.pending} onClick={() => void toggle()}>
              {d.enabled ? 'Disable' : 'Enable'}
            </button>
          </Gated>
          {d.kind === 'webhook' && (
            <Gated allowed={gate.allowed} label="Rotate secret">
              <ConfirmButton
                label="Rotate secret" name={`Rotate secret of ${quoted}`} confirmLabel="Rotate the secret" danger={false} disabled={act.pending}
                question={<>Make a new signing secret for {quoted}? It is shown once. The old secret keeps signing every delivery alongside the new one for 24 hours, so the receiver can switch over; then only the new one signs.</>}
                onConfirm={rotate}
              />
            </Gated>
          )}
          <Gated allowed={gate.allowed} label="Delete">
            <ConfirmButton
              label="Delete" name={`Delete ${quoted}`} confirmLabel="Delete the destination" disabled={act.pending}
              question={<>Delete the event destination {quoted}? Nothing more is sent to it, and its delivery log is deleted. This cannot be undone.</>}
              onConfirm={remove}
            />
          </Gated>
        </div>
      </div>
      <RouteNotice />
      <WriteGateNote gate={gate} />
      <ErrorMessage error={act.error} />
      <Notice message={done} />
      {d.status === 'failing' && (
        <div className="state state-error" role="alert">
          <strong>Failing.</strong> Deliveries to this destination have failed for over 24 hours; they are still retried, and later events wait behind the failed one.
          {d.lastError && <> Last error: {d.lastError} ({formatDateTime(d.lastFailureAt)}).</>}
        </div>
      )}

      {editing ? (
        <DestinationEditForm
          destination={d}
          onSaved={(saved) => { closeEditor(`Saved the changes to “${saved.name}”.`); reload(); }}
          onCancel={() => closeEditor(null)}
        />
      ) : (
        <section className="panel" aria-label="Destination details">
          <dl className="props destinations-props">
            <dt>Status</dt><dd><DestinationStatus destination={d} /></dd>
            <dt>Kind</dt><dd>{d.kind === 'webhook' ? 'Webhook (signed HTTPS POST)' : 'Syslog (RFC 5424)'}</dd>
            <dt>URL</dt><dd><code>{d.url}</code></dd>
            <dt>Covers</dt><dd>{coverageLabel(d, directory)}</dd>
            <dt>Actions</dt><dd>{d.filter.actions.length ? d.filter.actions.map((a) => <code key={a}>{a} </code>) : 'Every action'}</dd>
            <dt>Results</dt><dd>{d.filter.results.length ? d.filter.results.map((r) => RESULT_LABELS[r]).join(', ') : 'Every result'}</dd>
            <dt>Last success</dt><dd>{formatDateTime(d.lastSuccessAt)}</dd>
            <dt>Last failure</dt><dd>{formatDateTime(d.lastFailureAt)}</dd>
            <dt>Last error</dt><dd>{d.lastError ?? '—'}</dd>
            <dt>Created</dt><dd>{formatDateTime(d.createdAt)}</dd>
            <dt>Updated</dt><dd>{formatDateTime(d.updatedAt)}</dd>
            <dt>ID</dt><dd><code>{d.id}</code></dd>
          </dl>
        </section>
      )}

      <TestEvent destination={d} gate={gate} />
      <ReplayForm destination={d} directory={directory} gate={gate} />
      <DeliveryLog destination={d} directory={directory} />
    </>
  );
}
