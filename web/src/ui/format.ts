// Display formats used across screens.
export function formatDateTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** `datetime-local` input value → ISO string (or '' when empty). */
export function localInputToIso(value: string): string {
  return value ? new Date(value).toISOString() : '';
}

/** ISO 8601 → the local-time value a `datetime-local` input shows ('' for none or a bad value). */
export function isoToLocalInput(iso: string): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  const base = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return date.getSeconds() || date.getMilliseconds() ? `${base}:${pad(date.getSeconds())}` : base;
}

/** A timestamp as the day an `<input type="date">` holds ('' for none). */
export function isoToDateInput(value: string | null): string {
  return value ? value.slice(0, 10) : '';
}

/** An `<input type="date">` value as the API's timestamp: midnight UTC of that day (null for none). */
export function dateInputToIso(value: string): string | null {
  return value ? new Date(`${value}T00:00:00.000Z`).toISOString() : null;
}

/** A timestamp shown as its day, as the API stores contract dates. */
export function formatDay(value: string | null): string {
  return value ? value.slice(0, 10) : '—';
}
