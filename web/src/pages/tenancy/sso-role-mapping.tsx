// The role mapping of a single sign-on configuration: claim value → role, one row each, with labels
// a screen reader reads per row. Applied to accounts created at first sign-in only.
import { ROLES, type MappingRow, type Role } from './sso-config';

export function RoleMapping({ rows, error, onChange, onAdd }: {
  rows: MappingRow[];
  error: string | undefined;
  onChange: (rows: MappingRow[]) => void;
  onAdd: () => void;
}) {
  const update = (key: number, change: Partial<MappingRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));
  return (
    <div className={`field sso-mapping${error ? ' field-invalid' : ''}`} role="group" aria-labelledby="sso-mapping-label" aria-describedby={error ? 'sso-mapping-error' : 'sso-mapping-hint'}>
      <span id="sso-mapping-label" className="sso-mapping-label">Role mapping</span>
      <small id="sso-mapping-hint" className="hint">A claim value (e.g. a group name) and the role it gives; when several values map, the highest role wins. Roles stop at admin of this tenant.</small>
      {rows.length > 0 && (
        <ul className="sso-mapping-rows">
          {rows.map((row, i) => (
            <li key={row.key}>
              <input
                aria-label={`Claim value ${i + 1}`}
                aria-invalid={error ? true : undefined}
                autoComplete="off"
                spellCheck={false}
                value={row.value}
                onChange={(e) => update(row.key, { value: e.target.value })}
              />
              <select aria-label={`Role for claim value ${i + 1}`} value={row.role} onChange={(e) => update(row.key, { role: e.target.value as Role })}>
                {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
              </select>
              <button type="button" aria-label={`Remove mapping ${i + 1}${row.value ? ` (${row.value})` : ''}`} onClick={() => onChange(rows.filter((r) => r.key !== row.key))}>Remove</button>
            </li>
          ))}
        </ul>
      )}
      {error && <small id="sso-mapping-error" className="field-error" role="alert">{error}</small>}
      <div><button type="button" onClick={onAdd}>Add a mapping</button></div>
    </div>
  );
}
