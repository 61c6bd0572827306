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
