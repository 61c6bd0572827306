// Pieces every devices screen uses: the API shapes, badges, filters kept in the address (so a reload
// or a shared link shows the same view), and date-range checks made before anything is sent.
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import type { Ok } from '../../api/types';
import { isoToLocalInput, localInputToIso } from '../../ui/format';
import { Field } from '../../ui/forms';

export type Device = Ok<'/api/v1/devices/{id}', 'get'>;
export type DiagnosticLog = Ok<'/api/v1/devices/{id}/diagnostic-logs', 'get'>['data'][number];
export type StoredEvent = Ok<'/api/v1/devices/{id}/eventlogs', 'get'>['data'][number];
export type LiveDescriptor = Ok<'/api/v1/devices/{deviceId}/live/eventlogs/{name}', 'get'>['data'];
export type LiveEntry = Ok<'/api/v1/devices/{deviceId}/live/eventlogs/{name}/events/{recordId}', 'get'>['data'];

export const DEVICE_STATUSES = ['online', 'offline'] as const satisfies readonly Device['status'][];

export function StatusBadge({ status }: { status: Device['status'] }) {
  return <span className={`badge ${status === 'online' ? 'badge-ok' : 'badge-muted'}`}>{status}</span>;
}

const LEVEL_CLASS: Record<string, string> = {
  critical: 'badge-bad', error: 'badge-bad', warning: 'badge-warn', warn: 'badge-warn', debug: 'badge-muted', verbose: 'badge-muted',
};
export function LevelBadge({ level }: { level: string }) {
  return <span className={`badge ${LEVEL_CLASS[level] ?? ''}`}>{level}</span>;
}

/** The value when it is one of `allowed`, else undefined (an unknown value in the address is not sent). */
export function oneOf<T extends string>(allowed: readonly T[], value: string): T | undefined {
  return (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

/** Structured data (fields, details) as compact JSON for a table cell; a dash for null or `{}`. */
export function JsonCell({ value }: { value: Record<string, unknown> | null | undefined }) {
  if (!value || Object.keys(value).length === 0) return <span className="hint">—</span>;
  return <code className="devices-json">{JSON.stringify(value)}</code>;
}

/** The address's query string as filters: read one, or change some (which goes back to page 1). */
export function useUrlQuery() {
  const [params, setParams] = useSearchParams();
  const get = (key: string) => params.get(key) ?? '';
  const update = (patch: Record<string, string>) =>
    setParams((previous) => {
      const next = new URLSearchParams(previous);
      for (const [key, value] of Object.entries(patch)) {
        if (value === '') next.delete(key);
        else next.set(key, value);
      }
      if (!('page' in patch)) next.delete('page');
      return next;
    });
  const page = Math.max(1, Number.parseInt(get('page'), 10) || 1);
  return { params, get, update, page, setPage: (p: number) => update({ page: p > 1 ? String(p) : '' }) };
}
export type UrlQuery = ReturnType<typeof useUrlQuery>;

export type Errors<K extends string> = Partial<Record<K, string>>;

/**
 * A filter form's draft: starts from the address, follows it when it changes (back, forward, a link),
 * and is written to it only when it passes `validate`.
 */
export function useFilterForm<K extends string>(query: UrlQuery, keys: readonly K[], validate: (values: Record<K, string>) => Errors<K>) {
  const fromUrl = () => Object.fromEntries(keys.map((k) => [k, query.get(k)])) as Record<K, string>;
  const signature = keys.map((k) => query.get(k)).join('\u0000');
  const [draft, setDraft] = useState(fromUrl);
  const [showErrors, setShowErrors] = useState(false);
  useEffect(() => {
    setDraft(fromUrl());
    setShowErrors(false);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [signature]);

  const applied = fromUrl();
  const urlErrors = validate(applied);
  const draftErrors = validate(draft);
  return {
    /** The filters in force: the address's. */
    applied,
    draft,
    set: (key: K) => (value: string) => setDraft((d) => ({ ...d, [key]: value })),
    /** Errors to show beside the fields: after a refused submit, or when the address itself is invalid. */
    errors: showErrors ? draftErrors : urlErrors,
    /** The address's filters cannot be sent as they are. */
    urlInvalid: Object.keys(urlErrors).length > 0,
    submit(event: FormEvent) {
      event.preventDefault();
      if (Object.keys(draftErrors).length > 0) {
        setShowErrors(true);
        return;
      }
      query.update(draft);
    },
    clear() {
      query.update(Object.fromEntries(keys.map((k) => [k, ''])));
    },
  };
}

/** Checks an optional ISO date-time range: both parse, and the end comes after the start. */
export function checkRange<K extends string>(from: string, to: string, fromKey: K, toKey: K): Errors<K> {
  const errors: Errors<K> = {};
  const start = from ? Date.parse(from) : Number.NaN;
  const end = to ? Date.parse(to) : Number.NaN;
  if (from && Number.isNaN(start)) errors[fromKey] = 'Not a valid date and time';
  if (to && Number.isNaN(end)) errors[toKey] = 'Not a valid date and time';
  if (!Number.isNaN(start) && !Number.isNaN(end) && end <= start) errors[toKey] = 'Must be after the start';
  return errors;
}

/** The list envelope's pagination for <Pager>, which counts pages (the lists here always ask for totals). */
export function counted(p: { page: number; limit: number; total: number | null; totalPages: number | null }) {
  return { page: p.page, limit: p.limit, total: p.total ?? 0, totalPages: p.totalPages ?? p.page };
}

/** A page size from the address: a whole number in 1..max, else the error to show. */
export function checkLimit<K extends string>(value: string, max: number, key: K): Errors<K> {
  if (value === '') return {};
  const n = Number(value);
  return /^\d+$/.test(value) && n >= 1 && n <= max ? {} : ({ [key]: `A whole number from 1 to ${max}` } as Errors<K>);
}

export function PageSizeField({ value, onChange, max, error }: { value: string; onChange: (v: string) => void; max: number; error?: string | undefined }) {
  const sizes = [25, 50, 100, 200, 500, 1000].filter((n) => n <= max);
  return (
    <Field label="Per page" error={error}>
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">50 (default)</option>
        {sizes.filter((n) => n !== 50).map((n) => <option key={n} value={String(n)}>{n}</option>)}
        {value !== '' && !sizes.includes(Number(value)) && <option value={value}>{value}</option>}
      </select>
    </Field>
  );
}

/** A `datetime-local` input (to the second, in the browser's time zone) holding an ISO value. */
export function DateTimeField({ label, value, onChange, error }: { label: string; value: string; onChange: (iso: string) => void; error?: string | undefined }) {
  return (
    <Field label={label} error={error}>
      <input type="datetime-local" step={1} value={isoToLocalInput(value)} onChange={(e) => onChange(localInputToIso(e.target.value))} />
    </Field>
  );
}

/** The buttons under every filter form. */
export function FilterActions({ onClear }: { onClear: () => void }) {
  return (
    <div className="actions">
      <button type="submit" className="primary">Apply filters</button>
      <button type="button" onClick={onClear}>Clear</button>
    </div>
  );
}

export function InvalidFilters({ children }: { children?: ReactNode }) {
  return <p className="state state-error" role="alert">{children ?? 'The filters in the address are not valid: correct them above and apply them.'}</p>;
}
