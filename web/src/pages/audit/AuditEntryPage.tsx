// One audit entry with every field, its chain links, and the before/after values side by side.
import { Fragment } from 'react';
import { Link, useLocation, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { loadOrganizations } from '../../api/directory';
import { useUser } from '../../session/session';
import { formatDateTime } from '../../ui/format';
import { StatusBadge } from '../../ui/status-badge';
import { ErrorMessage, Spinner } from '../../ui/states';
import { useLoad } from '../../ui/use-load';
import { actionLabel } from './action-labels';
import { actorTypeLabel } from './AuditTable';
import type { LogEntry, Organization } from './query';

export function AuditEntryPage() {
  const { entryId = '' } = useParams();
  const location = useLocation();
  const user = useUser();
  const back = `/audit${(location.state as { back?: string } | null)?.back ?? ''}`;
  const entry = useLoad(() => call(api.GET('/api/v1/audit-logs/logs/{id}', { params: { path: { id: entryId } } })), [entryId]);
  // Organization names for partner and system callers; an organization caller's entries are all its own.
  const orgs = useLoad(
    () => (user.scope === 'organization' ? Promise.resolve([] as Organization[]) : loadOrganizations()),
    [user.scope],
  );

  const backLink = <p><Link to={back}>← Back to the audit log</Link></p>;
  // A missing entry, one of another organization, and an id that is no UUID all read the same.
  const missing = entry.error && (entry.error.status === 404 || (entry.error.status === 400 && entry.error.code === 'VALIDATION_FAILED'));
  if (missing) {
    return (
      <main id="main" className="page audit">
        {backLink}
        <h1>Entry not found</h1>
        <p>There is no audit entry <code>{entryId}</code> that you can see. It may belong to an organization outside your reach, or the link may be wrong.</p>
      </main>
    );
  }
  return (
    <main id="main" className="page audit">
      {backLink}
      {entry.error ? (
        <>
          <h1>Audit entry</h1>
          <ErrorMessage error={entry.error} onRetry={entry.reload} />
        </>
      ) : !entry.data ? (
        <>
          <h1>Audit entry</h1>
          <Spinner label="Loading the entry…" />
        </>
      ) : (
        <EntryView entry={entry.data} orgs={orgs.data} />
      )}
    </main>
  );
}

function EntryView({ entry, orgs }: { entry: LogEntry; orgs: Organization[] | undefined }) {
  const orgName = entry.orgId ? orgs?.find((o) => o.id === entry.orgId)?.name : null;
  const pending = entry.seq === null;
  return (
    <>
      <h1><code>{entry.action}</code> <StatusBadge status={entry.result} /></h1>
      <p className="hint">{formatDateTime(entry.timestamp)} · {entry.category}</p>

      <section className="panel" aria-labelledby="entry-fields">
        <h2 id="entry-fields">Entry</h2>
        <dl className="props audit-props">
          <dt>Entry id</dt><dd><code>{entry.id}</code></dd>
          <dt>Time</dt><dd><time dateTime={entry.timestamp}>{formatDateTime(entry.timestamp)}</time> <span className="hint">({entry.timestamp})</span></dd>
          <dt>Organization</dt>
          <dd>{entry.orgId ? <>{orgName ? <>{orgName} </> : null}<code>{entry.orgId}</code></> : 'Platform (no organization)'}</dd>
          <dt>Action</dt><dd><code>{entry.action}</code> {actionLabel(entry.action)}</dd>
          <dt>Category</dt><dd>{entry.category}</dd>
          <dt>Result</dt><dd><StatusBadge status={entry.result} /></dd>
          {entry.errorMessage && <><dt>Error message</dt><dd>{entry.errorMessage}</dd></>}
        </dl>
      </section>

      <section className="panel" aria-labelledby="entry-actor">
        <h2 id="entry-actor">Actor</h2>
        <dl className="props audit-props">
          <dt>Actor type</dt><dd>{actorTypeLabel(entry.actorType)} <span className="hint">({entry.actorType})</span></dd>
          <dt>Name</dt><dd>{entry.user.name ?? '—'}</dd>
          <dt>E-mail</dt><dd>{entry.actorEmail ?? entry.user.email ?? '—'}</dd>
          <dt>Role</dt><dd>{entry.user.role ?? '—'}</dd>
          <dt>Actor id</dt><dd>{entry.actorId ? <code>{entry.actorId}</code> : '—'}</dd>
          <dt>IP address</dt><dd>{entry.ipAddress ?? '—'}</dd>
          <dt>User agent</dt><dd className="audit-wrap">{entry.userAgent ?? '—'}</dd>
        </dl>
      </section>

      <section className="panel" aria-labelledby="entry-resource">
        <h2 id="entry-resource">Resource</h2>
        <dl className="props audit-props">
          <dt>Type</dt><dd>{entry.resourceType ?? '—'}</dd>
          <dt>Name</dt><dd>{entry.resourceName ?? '—'}</dd>
          <dt>Id</dt><dd>{entry.resourceId ? <code>{entry.resourceId}</code> : '—'}</dd>
        </dl>
      </section>

      <section className="panel" aria-labelledby="entry-chain">
        <h2 id="entry-chain">Hash chain</h2>
        {pending && <p className="warning" role="note">Pending: this row is not sealed into its chain yet (it is within about a second). Reload to see its place.</p>}
        <dl className="props audit-props">
          <dt>Sequence (seq)</dt><dd>{entry.seq ?? 'pending'}</dd>
          <dt>Checksum</dt><dd className="audit-hash">{entry.checksum ? <code>{entry.checksum}</code> : 'pending'}</dd>
          <dt>Previous checksum</dt>
          <dd className="audit-hash">{entry.prevChecksum ? <code>{entry.prevChecksum}</code> : pending ? 'pending' : 'none (first row of the chain)'}</dd>
        </dl>
      </section>

      <Changes details={entry.details} />

      <section className="panel" aria-labelledby="entry-details">
        <h2 id="entry-details">Details</h2>
        <pre className="audit-json">{JSON.stringify(entry.details, null, 2)}</pre>
      </section>
    </>
  );
}

const asObject = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** JSON with object keys sorted, so two values compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const object = asObject(value);
  if (object) return `{${Object.keys(object).sort().map((k) => `${JSON.stringify(k)}:${canonical(object[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

function Changes({ details }: { details: Record<string, unknown> }) {
  const before = asObject(details.before);
  const after = asObject(details.after);
  const changedFields = Array.isArray(details.changedFields) ? details.changedFields.map(String) : [];
  if (!before && !after) {
    return (
      <section className="panel" aria-labelledby="entry-changes">
        <h2 id="entry-changes">Changes</h2>
        <p className="hint">This entry records no before and after values.</p>
        {changedFields.length > 0 && <p>Changed fields: {changedFields.join(', ')}</p>}
      </section>
    );
  }
  const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  const differs = (field: string) => canonical(before?.[field]) !== canonical(after?.[field]);
  const changedCount = fields.filter(differs).length;
  // Values hidden from the record (a password) are named as changed without values.
  const hidden = changedFields.filter((f) => !fields.includes(f));
  return (
    <section className="panel" aria-labelledby="entry-changes">
      <h2 id="entry-changes">Changes</h2>
      <p className="hint">
        {changedCount === 1 ? '1 field differs' : `${changedCount} fields differ`}; differing fields are marked “changed”.
        {hidden.length > 0 && <> Also changed, values not recorded: {hidden.join(', ')}.</>}
      </p>
      {/* One grid row per field, so a field's before and after cells line up whatever their height. */}
      <div className="side-by-side audit-diff">
        <h3>Before{!before && <span className="hint"> — nothing (created)</span>}</h3>
        <h3>After{!after && <span className="hint"> — nothing (removed)</span>}</h3>
        {fields.map((field) => {
          const changed = differs(field);
          return (
            <Fragment key={field}>
              <ChangeCell side="Before" field={field} values={before} changed={changed} />
              <ChangeCell side="After" field={field} values={after} changed={changed} />
            </Fragment>
          );
        })}
      </div>
    </section>
  );
}

function ChangeCell({ side, field, values, changed }: { side: string; field: string; values: Record<string, unknown> | null; changed: boolean }) {
  return (
    <div className={`audit-diff-cell${changed ? ' audit-changed' : ''}`} data-side={side.toLowerCase()} data-field={field} data-changed={changed || undefined}>
      <div className="audit-diff-field">
        <span className="visually-hidden">{side}: </span>{field}
        {changed && <> <StatusBadge status="changed" /></>}
      </div>
      {values && field in values ? <Value value={values[field]} /> : <span className="hint">(absent)</span>}
    </div>
  );
}

function Value({ value }: { value: unknown }) {
  if (typeof value === 'string') return <span className="audit-wrap">{value === '' ? <span className="hint">(empty)</span> : value}</span>;
  if (value === null) return <span className="hint">null</span>;
  if (typeof value === 'object') return <pre className="audit-json">{JSON.stringify(value, null, 2)}</pre>;
  return <code>{String(value)}</code>;
}
