// One live event log: its descriptor and its events, filtered and paged on the device
// (GET …/live/eventlogs/{name} and …/{name}/events; SPEC "Live event log queries").
import { Link, useLocation, useParams } from 'react-router';
import { api, call } from '../../../api/client';
import { formatDateTime } from '../../../ui/format';
import type { Ok } from '../../../api/types';
import { Field } from '../../../ui/forms';
import { useListQuery } from '../../../ui/list-query';
import { Pager } from '../../../ui/pager';
import { Empty } from '../../../ui/states';
import { StatusBadge } from '../../../ui/status-badge';
import {
  DateTimeField, FilterActions, InvalidFilters, PageSizeField, checkLimit, checkRange, oneOf, pageSize, useFilterForm, type Errors,
} from '../filter-form';
import { LiveResult, RefreshButton, bytes, logPath, useLiveQuery, type LiveProps } from './live-query';

type LiveEntry = Ok<'/api/v1/devices/{deviceId}/live/eventlogs/{name}/events/{recordId}', 'get'>['data'];

const LEVELS = ['information', 'warning', 'error', 'critical', 'verbose'] as const satisfies readonly LiveEntry['level'][];
const KEYS = ['level', 'source', 'startTime', 'endTime', 'eventId', 'limit'] as const;
type Key = (typeof KEYS)[number];

function validate(v: Record<Key, string>): Errors<Key> {
  return {
    ...(v.level && !oneOf(LEVELS, v.level) ? { level: 'Unknown level' } : {}),
    ...(v.source.length > 255 ? { source: 'At most 255 characters' } : {}),
    ...(v.eventId && !(/^\d+$/.test(v.eventId) && Number.isSafeInteger(Number(v.eventId))) ? { eventId: 'Digits only, e.g. 7036' } : {}),
    ...checkRange(v.startTime, v.endTime, 'startTime', 'endTime'),
    ...checkLimit(v.limit, 500, 'limit'),
  };
}

export function LiveEvents({ device, reloadDevice }: LiveProps) {
  const { logName = '' } = useParams();
  const location = useLocation();
  const query = useListQuery(KEYS);
  const form = useFilterForm(query, validate);
  const v = form.applied;
  const path = { deviceId: device.id, name: logName };

  const descriptor = useLiveQuery(
    async () => (await call(api.GET('/api/v1/devices/{deviceId}/live/eventlogs/{name}', { params: { path } }))).data,
    [device.id, logName],
    reloadDevice,
  );
  const events = useLiveQuery(async () => {
    if (form.urlInvalid) return null;
    return call(api.GET('/api/v1/devices/{deviceId}/live/eventlogs/{name}/events', {
      params: {
        path,
        query: {
          page: query.page, limit: pageSize(v.limit), level: oneOf(LEVELS, v.level), source: v.source || undefined,
          startTime: v.startTime || undefined, endTime: v.endTime || undefined, eventId: v.eventId ? Number(v.eventId) : undefined,
        },
      },
    }));
  }, [device.id, logName, query.key], reloadDevice);
  const both = { loading: descriptor.loading || events.loading, refresh: () => { descriptor.reload(); events.refresh(); } };

  return (
    <section aria-labelledby="log-title">
      <p><Link to={`/devices/${device.id}/live`}>← All live event logs</Link></p>
      <div className="devices-heading">
        <h2 id="log-title">{descriptor.data?.displayName || logName}</h2>
        <RefreshButton query={both} />
      </div>
      <LiveResult query={descriptor} device={device} notFound={`The device has no event log named “${logName}”.`}>
        {(d) => (
          <p className="hint">
            <code>{d.name}</code> · {d.recordCount.toLocaleString()} records · at most {bytes(d.maxSize)} · retention {d.retentionDays} days · last written {formatDateTime(d.lastWriteTime)}
          </p>
        )}
      </LiveResult>
      {!descriptor.error && (
        <>
          <form className="filters" role="search" aria-label="Filter live events" onSubmit={form.submit} noValidate>
            <Field label="Level" error={form.errors.level}>
              <select value={form.draft.level} onChange={(e) => form.set('level')(e.target.value)}>
                <option value="">Any level</option>
                {LEVELS.map((l) => <option key={l} value={l}>{l}</option>)}
              </select>
            </Field>
            <Field label="Source" error={form.errors.source}>
              <input value={form.draft.source} maxLength={255} onChange={(e) => form.set('source')(e.target.value)} />
            </Field>
            <Field label="Event id" error={form.errors.eventId}>
              <input inputMode="numeric" size={8} value={form.draft.eventId} onChange={(e) => form.set('eventId')(e.target.value.trim())} />
            </Field>
            <DateTimeField label="From" value={form.draft.startTime} onChange={form.set('startTime')} error={form.errors.startTime} />
            <DateTimeField label="To" value={form.draft.endTime} onChange={form.set('endTime')} error={form.errors.endTime} />
            <PageSizeField value={form.draft.limit} onChange={form.set('limit')} max={500} error={form.errors.limit} />
            <FilterActions onClear={form.clear} />
          </form>
          {form.urlInvalid ? <InvalidFilters /> : (
            <LiveResult query={events} device={device} notFound={`The device has no event log named “${logName}”.`}>
              {(page) => !page || page.data.length === 0 ? <Empty>No event matches.</Empty> : (
                <>
                  <table>
                    <thead>
                      <tr><th scope="col">Record</th><th scope="col">Time</th><th scope="col">Level</th><th scope="col">Source</th><th scope="col">Event id</th><th scope="col">Category</th><th scope="col">Message</th></tr>
                    </thead>
                    <tbody>
                      {page.data.map((e) => (
                        <tr key={e.recordId}>
                          <td><Link to={{ pathname: `${logPath(device.id, logName)}/${e.recordId}`, search: location.search }} aria-label={`Record ${e.recordId}`}>{e.recordId}</Link></td>
                          <td>{formatDateTime(e.timeCreated)}</td>
                          <td><StatusBadge status={e.level} /></td>
                          <td>{e.source}</td>
                          <td>{e.eventId}</td>
                          <td>{e.category}</td>
                          <td className="devices-text">{e.message.length > 200 ? `${e.message.slice(0, 200)}…` : e.message}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                  <Pager list={page} onPage={query.setPage} label="Event pages" />
                </>
              )}
            </LiveResult>
          )}
        </>
      )}
    </section>
  );
}
