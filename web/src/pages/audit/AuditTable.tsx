// The entries table shared by the list and the search: one row per entry, each linking to its page.
import { Link } from 'react-router';
import { formatDateTime } from '../../ui/format';
import { StatusBadge } from '../../ui/status-badge';
import { actionLabel } from './action-labels';
import type { LogEntry } from './query';

export function AuditTable({ entries, busy, back }: { entries: LogEntry[]; busy: boolean; back: string }) {
  return (
    <table className="audit-table" aria-busy={busy || undefined}>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Actor</th>
          <th scope="col">Action</th>
          <th scope="col">Resource</th>
          <th scope="col">Result</th>
          <th scope="col">IP address</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry.id}>
            <td>
              <Link to={`/audit/${entry.id}`} state={{ back }} title="Open this entry">
                <time dateTime={entry.timestamp}>{formatDateTime(entry.timestamp)}</time>
              </Link>
            </td>
            <td><Actor entry={entry} /></td>
            <td><code>{entry.action}</code><div className="hint">{actionLabel(entry.action)} · {entry.category}</div></td>
            <td><Resource entry={entry} /></td>
            <td><StatusBadge status={entry.result} /></td>
            <td>{entry.ipAddress ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const ACTOR_TYPES: Record<LogEntry['actorType'], string> = { user: 'User', api_key: 'API key', agent: 'Agent', system: 'System' };

export function actorTypeLabel(type: LogEntry['actorType']): string {
  return ACTOR_TYPES[type] ?? type;
}

function Actor({ entry }: { entry: LogEntry }) {
  const name = entry.user.name;
  const email = entry.actorEmail ?? entry.user.email;
  if (!name && !email) return <>{actorTypeLabel(entry.actorType)}</>;
  return (
    <>
      {name ?? email}
      {name && email && <div className="hint">{email}</div>}
      {entry.actorType !== 'user' && <div className="hint">{actorTypeLabel(entry.actorType)}</div>}
    </>
  );
}

function Resource({ entry }: { entry: LogEntry }) {
  const { type, name } = entry.resource;
  if (!type && !name) return <>—</>;
  return (
    <>
      {name ?? type}
      {name && type && <div className="hint">{type}</div>}
    </>
  );
}
