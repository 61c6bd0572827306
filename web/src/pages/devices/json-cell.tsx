// Structured data of a log row (fields, details) in a table cell.

/** Compact JSON; a dash for null or `{}`. */
export function JsonCell({ value }: { value: Record<string, unknown> | null | undefined }) {
  if (!value || Object.keys(value).length === 0) return <span className="hint">—</span>;
  return <code className="devices-json">{JSON.stringify(value)}</code>;
}
