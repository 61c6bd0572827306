// Event logs the agent has stored (SPEC "Device event log entry (stored)"): GET /devices/{id}/eventlogs
// with category, level, exact source and a date range, newest first.
import { api, call } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { Field } from '../../ui/forms';
import { useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad } from '../../ui/use-load';
import {
  DateTimeField, FilterActions, InvalidFilters, PageSizeField, checkLimit, checkRange, oneOf, pageSize, useFilterForm, type Errors,
} from './filter-form';
import { JsonCell } from './json-cell';

const CATEGORIES = ['security', 'hardware', 'application', 'system'] as const;
const LEVELS = ['info', 'warning', 'error', 'critical'] as const;
const KEYS = ['category', 'level', 'source', 'startDate', 'endDate', 'limit'] as const;
type Key = (typeof KEYS)[number];

function validate(v: Record<Key, string>): Errors<Key> {
  return {
    ...(v.category && !oneOf(CATEGORIES, v.category) ? { category: 'Unknown category' } : {}),
    ...(v.level && !oneOf(LEVELS, v.level) ? { level: 'Unknown level' } : {}),
    ...(v.source.length > 255 ? { source: 'At most 255 characters' } : {}),
    ...checkRange(v.startDate, v.endDate, 'startDate', 'endDate'),
    ...checkLimit(v.limit, 500, 'limit'),
  };
}

export function StoredEventLogs({ deviceId }: { deviceId: string }) {
  const query = useListQuery(KEYS);
  const form = useFilterForm(query, validate);
  const v = form.applied;
  const events = useLoad(async () => {
    if (form.urlInvalid) return null;
    return call(api.GET('/api/v1/devices/{id}/eventlogs', {
      params: {
        path: { id: deviceId },
        query: {
          page: query.page, limit: pageSize(v.limit), category: oneOf(CATEGORIES, v.category), level: oneOf(LEVELS, v.level),
          source: v.source || undefined, startDate: v.startDate || undefined, endDate: v.endDate || undefined,
        },
      },
    }));
  }, [deviceId, query.key]);

  return (
    <section aria-labelledby="stored-title">
      <h2 id="stored-title">Event logs</h2>
      <p className="hint">Events the agent has sent to the service. To read the device's logs as they are now, use Live event logs.</p>
      <form className="filters" role="search" aria-label="Filter event logs" onSubmit={form.submit} noValidate>
        <Field label="Category" error={form.errors.category}>
          <select value={form.draft.category} onChange={(e) => form.set('category')(e.target.value)}>
            <option value="">Any category</option>
            {CATEGORIES.map((c) => <option key={c} value={c}>{c}</option>)}
          </select>
        </Field>
        <Field label="Level" error={form.errors.level}>
          <select value={form.draft.level} onChange={(e) => form.set('level')(e.target.value)}>
            <option value="">Any level</option>
            {LEVELS.map((l) => <option key={l} value={l}>{l}</option>)}
          </select>
        </Field>
        <Field label="Source" error={form.errors.source} hint="exact name">
          <input value={form.draft.source} maxLength={255} onChange={(e) => form.set('source')(e.target.value)} />
        </Field>
        <DateTimeField label="From" value={form.draft.startDate} onChange={form.set('startDate')} error={form.errors.startDate} />
        <DateTimeField label="To" value={form.draft.endDate} onChange={form.set('endDate')} error={form.errors.endDate} />
        <PageSizeField value={form.draft.limit} onChange={form.set('limit')} max={500} error={form.errors.limit} />
        <FilterActions onClear={form.clear} />
      </form>
      {form.urlInvalid ? <InvalidFilters /> : (
        <Loadable state={events} isEmpty={(p) => !p || p.data.length === 0} empty="No stored event matches.">
          {(p) => p && (
            <>
              <table aria-busy={events.loading}>
                <thead>
                  <tr><th scope="col">Time</th><th scope="col">Level</th><th scope="col">Category</th><th scope="col">Source</th><th scope="col">Event id</th><th scope="col">Message</th><th scope="col">Details</th></tr>
                </thead>
                <tbody>
                  {p.data.map((e) => (
                    <tr key={e.id}>
                      <td>{formatDateTime(e.timestamp)}</td>
                      <td><StatusBadge status={e.level} /></td>
                      <td>{e.category}</td>
                      <td>{e.source}</td>
                      <td>{e.eventId ?? '—'}</td>
                      <td className="devices-text">{e.message}</td>
                      <td><JsonCell value={e.details} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager list={p} onPage={query.setPage} label="Event log pages" />
            </>
          )}
        </Loadable>
      )}
    </section>
  );
}
