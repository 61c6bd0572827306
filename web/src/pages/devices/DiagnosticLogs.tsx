// The agent's diagnostic logs (SPEC "Agent diagnostic log entry"): GET /devices/{id}/diagnostic-logs
// with levels, component, message search and a time range, newest first.
import { api, call } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { Checkbox, Field } from '../../ui/forms';
import { useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad } from '../../ui/use-load';
import { DateTimeField, FilterActions, InvalidFilters, PageSizeField, checkLimit, checkRange, pageSize, useFilterForm, type Errors } from './filter-form';
import { JsonCell } from './json-cell';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
const KEYS = ['level', 'component', 'search', 'since', 'until', 'limit'] as const;
type Key = (typeof KEYS)[number];

function validate(v: Record<Key, string>): Errors<Key> {
  const unknown = v.level.split(',').filter((l) => l && !(LEVELS as readonly string[]).includes(l));
  return {
    ...(unknown.length > 0 ? { level: `Unknown level ${unknown.join(', ')}` } : {}),
    ...(v.component.length > 100 ? { component: 'At most 100 characters' } : {}),
    ...checkRange(v.since, v.until, 'since', 'until'),
    ...checkLimit(v.limit, 1000, 'limit'),
  };
}

export function DiagnosticLogs({ deviceId }: { deviceId: string }) {
  const query = useListQuery(KEYS);
  const form = useFilterForm(query, validate);
  const v = form.applied;
  const logs = useLoad(async () => {
    if (form.urlInvalid) return null;
    return call(api.GET('/api/v1/devices/{id}/diagnostic-logs', {
      params: {
        path: { id: deviceId },
        query: {
          page: query.page, limit: pageSize(v.limit), level: v.level || undefined, component: v.component || undefined,
          search: v.search || undefined, since: v.since || undefined, until: v.until || undefined,
        },
      },
    }));
  }, [deviceId, query.key]);

  const chosen = form.draft.level ? form.draft.level.split(',') : [];
  const toggle = (level: string, on: boolean) =>
    form.set('level')(LEVELS.filter((l) => (l === level ? on : chosen.includes(l))).join(','));

  return (
    <section aria-labelledby="diag-title">
      <h2 id="diag-title">Diagnostic logs</h2>
      <form className="filters" role="search" aria-label="Filter diagnostic logs" onSubmit={form.submit} noValidate>
        <fieldset className="field devices-levels" aria-describedby={form.errors.level ? 'diag-level-error' : undefined}>
          <legend>Level</legend>
          <div>{LEVELS.map((l) => <Checkbox key={l} label={l} checked={chosen.includes(l)} onChange={(on) => toggle(l, on)} />)}</div>
          {form.errors.level && <small id="diag-level-error" className="field-error" role="alert">{form.errors.level}</small>}
        </fieldset>
        <Field label="Component" error={form.errors.component} hint="exact name, e.g. heartbeat">
          <input value={form.draft.component} maxLength={100} onChange={(e) => form.set('component')(e.target.value)} />
        </Field>
        <Field label="Message contains">
          <input type="search" value={form.draft.search} onChange={(e) => form.set('search')(e.target.value)} />
        </Field>
        <DateTimeField label="From" value={form.draft.since} onChange={form.set('since')} error={form.errors.since} />
        <DateTimeField label="To" value={form.draft.until} onChange={form.set('until')} error={form.errors.until} />
        <PageSizeField value={form.draft.limit} onChange={form.set('limit')} max={1000} error={form.errors.limit} />
        <FilterActions onClear={form.clear} />
      </form>
      {form.urlInvalid ? <InvalidFilters /> : (
        <Loadable state={logs} isEmpty={(p) => !p || p.data.length === 0} empty="No diagnostic log entry matches.">
          {(p) => p && (
            <>
              <table aria-busy={logs.loading}>
                <thead><tr><th scope="col">Time</th><th scope="col">Level</th><th scope="col">Component</th><th scope="col">Message</th><th scope="col">Fields</th><th scope="col">Agent</th></tr></thead>
                <tbody>
                  {p.data.map((e) => (
                    <tr key={e.id}>
                      <td>{formatDateTime(e.timestamp)}</td>
                      <td><StatusBadge status={e.level} /></td>
                      <td>{e.component}</td>
                      <td className="devices-text">{e.message}</td>
                      <td><JsonCell value={e.fields} /></td>
                      <td>{e.agentVersion ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager list={p} onPage={query.setPage} label="Diagnostic log pages" />
            </>
          )}
        </Loadable>
      )}
    </section>
  );
}
