// The filter forms of the device log screens: a draft that is checked before it reaches the address
// (where the list reads it, see ui/list-query.ts), the checks, and the fields they share.
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { isoToLocalInput, localInputToIso } from '../../ui/format';
import { Field } from '../../ui/forms';
import { PAGE_SIZE, type ListQuery } from '../../ui/list-query';

export type Errors<K extends string> = Partial<Record<K, string>>;

/** The value when it is one of `allowed`, else undefined (an unknown value in the address is not sent). */
export function oneOf<T extends string>(allowed: readonly T[], value: string): T | undefined {
  return (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

/**
 * A filter form's draft: starts from the address, follows it when it changes (back, forward, a link),
 * and is written to it only when it passes `validate`.
 */
export function useFilterForm<K extends string>(query: ListQuery<K>, validate: (values: Record<K, string>) => Errors<K>) {
  const applied = query.filters;
  const keys = Object.keys(applied) as K[];
  const signature = keys.map((k) => applied[k]).join('\u0000');
  const [draft, setDraft] = useState(applied);
  const [showErrors, setShowErrors] = useState(false);
  useEffect(() => {
    setDraft(applied);
    setShowErrors(false);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [signature]);

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
      query.setFilters(draft);
    },
    clear() {
      query.setFilters(Object.fromEntries(keys.map((k) => [k, ''])) as Record<K, string>);
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

/** A page size from the address: a whole number in 1..max, else the error to show. */
export function checkLimit<K extends string>(value: string, max: number, key: K): Errors<K> {
  if (value === '') return {};
  const n = Number(value);
  return /^\d+$/.test(value) && n >= 1 && n <= max ? {} : ({ [key]: `A whole number from 1 to ${max}` } as Errors<K>);
}

/** The page size to ask for: the one chosen in the form, else the console's. */
export function pageSize(limit: string): number {
  return limit ? Number(limit) : PAGE_SIZE;
}

export function PageSizeField({ value, onChange, max, error }: { value: string; onChange: (v: string) => void; max: number; error?: string | undefined }) {
  const sizes = [25, 50, 100, 200, 500, 1000].filter((n) => n <= max);
  return (
    <Field label="Per page" error={error}>
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{PAGE_SIZE} (default)</option>
        {sizes.filter((n) => n !== PAGE_SIZE).map((n) => <option key={n} value={String(n)}>{n}</option>)}
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
