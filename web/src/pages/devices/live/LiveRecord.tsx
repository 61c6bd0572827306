// One record of a live event log, every field of SPEC "Live event log entry":
// GET …/live/eventlogs/{name}/events/{recordId}.
import { Link, useLocation, useParams } from 'react-router';
import { api, call } from '../../../api/client';
import { formatDateTime } from '../../../ui/format';
import { StatusBadge } from '../../../ui/status-badge';
import { LiveResult, RefreshButton, logPath, useLiveQuery, type LiveProps } from './live-query';

export function LiveRecord({ device, reloadDevice }: LiveProps) {
  const { logName = '', recordId = '' } = useParams();
  const location = useLocation();
  const valid = /^\d+$/.test(recordId) && Number.isSafeInteger(Number(recordId));
  const record = useLiveQuery(async () => {
    if (!valid) return null;
    const path = { deviceId: device.id, name: logName, recordId: Number(recordId) };
    return (await call(api.GET('/api/v1/devices/{deviceId}/live/eventlogs/{name}/events/{recordId}', { params: { path } }))).data;
  }, [device.id, logName, recordId], reloadDevice);

  return (
    <section aria-labelledby="record-title">
      {/* The events' filters and page travel in the query string, so going back shows the same list. */}
      <p><Link to={{ pathname: logPath(device.id, logName), search: location.search }}>← Events of {logName}</Link></p>
      <div className="devices-heading">
        <h2 id="record-title">Record {recordId} of {logName}</h2>
        {valid && <RefreshButton query={record} />}
      </div>
      {!valid ? <p className="state state-error" role="alert">“{recordId}” is not a record number: record numbers are digits only.</p> : (
        <LiveResult query={record} device={device} notFound={`The log “${logName}” has no record ${recordId} on the device.`}>
          {(e) => e && (
            <dl className="props panel">
              <dt>Record id</dt><dd>{e.recordId}</dd>
              <dt>Time created</dt><dd>{formatDateTime(e.timeCreated)} <span className="hint">({e.timeCreated})</span></dd>
              <dt>Level</dt><dd><StatusBadge status={e.level} /></dd>
              <dt>Source</dt><dd>{e.source}</dd>
              <dt>Event id</dt><dd>{e.eventId}</dd>
              <dt>Category</dt><dd>{e.category}</dd>
              <dt>User</dt><dd>{e.user ?? '—'}</dd>
              <dt>Computer</dt><dd>{e.computer}</dd>
              <dt>Message</dt><dd><pre>{e.message}</pre></dd>
              <dt>Raw XML</dt><dd>{e.rawXml ? <pre>{e.rawXml}</pre> : <span className="hint">not available</span>}</dd>
            </dl>
          )}
        </LiveResult>
      )}
    </section>
  );
}
