// Columns and parameters for an INSERT or UPDATE from API-named values: fields left undefined are
// not written, and JSON columns receive their value as JSON text.
export interface ColumnMap<F extends string> {
  columns: Record<F, string>;
  json: ReadonlySet<F>;
}

export function columnValues<F extends string>(map: ColumnMap<F>, values: Partial<Record<F, unknown>>): { columns: string[]; params: unknown[] } {
  const fields = (Object.keys(values) as F[]).filter((f) => values[f] !== undefined);
  return {
    columns: fields.map((f) => map.columns[f]),
    params: fields.map((f) => (map.json.has(f) && values[f] !== null ? JSON.stringify(values[f]) : values[f])),
  };
}

/**
 * The nil UUID (RFC 9562): a uuid column's "none" where NULL cannot serve. It is the platform
 * audit chain's id (chain_id = coalesce(org_id, nil) in migrations 0002 and 0006) and the id
 * stored for an audit actor or resource whose own id is not a UUID.
 */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
