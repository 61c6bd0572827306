// The hash chain's integrity for one organization (or the platform chain): GET /audit-logs/verify.
import { useEffect, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { api, call } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ErrorMessage, Spinner } from '../../ui/states';
import { useLoad } from '../../ui/use-load';
import type { ChainReport } from './query';

/**
 * `orgId` '' verifies the caller's own chain when `needsOrg` is false (organization scope); a partner
 * or system caller must name one, so the panel asks for it.
 */
export function ChainStatus({ orgId, needsOrg, label }: { orgId: string; needsOrg: boolean; label: string }) {
  const [checkedAt, setCheckedAt] = useState<string | null>(null);
  const report = useLoad(
    async () => (needsOrg && !orgId ? null : call(api.GET('/api/v1/audit-logs/verify', { params: { query: orgId ? { orgId } : {} } }))),
    [orgId, needsOrg],
  );
  useEffect(() => setCheckedAt(report.data ? new Date().toISOString() : null), [report.data]);

  return (
    <section className="panel chain-status" aria-labelledby="chain-title" aria-busy={report.loading || undefined}>
      <h2 id="chain-title">Chain integrity{needsOrg && orgId ? <>: {label}</> : null}</h2>
      {needsOrg && !orgId ? (
        <p className="hint">Choose an organization (or the platform) above to verify its hash chain.</p>
      ) : (
        <>
          {report.error ? (
            <ErrorMessage error={report.error} />
          ) : report.data ? (
            <ChainReportView report={report.data} stale={report.loading} />
          ) : (
            <Spinner label="Verifying the chain…" />
          )}
          <div className="actions">
            <button type="button" onClick={report.reload} disabled={report.loading}>
              {report.loading ? 'Verifying…' : 'Verify again'}
            </button>
            {checkedAt && !report.loading && !report.error && <span className="hint">Checked {formatDateTime(checkedAt)}</span>}
          </div>
        </>
      )}
    </section>
  );
}

function ChainReportView({ report, stale }: { report: ChainReport; stale: boolean }) {
  const { valid, checked, firstSeq, lastSeq, anchor, pending, brokenAt } = report;
  const { search } = useLocation();
  return (
    <div className={stale ? 'stale' : undefined}>
      <p className={`chain-verdict ${valid ? 'chain-valid' : 'chain-broken'}`} role="status">
        <span aria-hidden="true">{valid ? '✔' : '✘'}</span>{' '}
        {valid ? <><strong>Valid</strong>: every checked row matches its checksum and links to the one before.</>
          : <><strong>Broken</strong>: the chain does not verify{brokenAt ? <> from seq {brokenAt.seq} on</> : null}.</>}
      </p>
      <dl className="props">
        <dt>Rows checked</dt>
        <dd>{checked}{firstSeq !== null && lastSeq !== null && <> (seq {firstSeq}–{lastSeq})</>}</dd>
        <dt>Pending (unsealed) rows</dt>
        <dd>
          {pending}
          {pending > 0 && <span className="hint"> — sealed into the chain within about a second; verify again to include them.</span>}
        </dd>
        {anchor && (
          <>
            <dt>Retention anchor</dt>
            <dd>rows up to seq {anchor.seq} were removed by retention; checking starts after them</dd>
          </>
        )}
        {brokenAt && (
          <>
            <dt>First broken seq</dt>
            <dd className="chain-broken-at">
              <strong>{brokenAt.seq}</strong>: {brokenAt.reason}
              {brokenAt.id && <> · <Link to={`/audit/${brokenAt.id}`} state={{ back: search }}>Open that entry</Link></>}
            </dd>
          </>
        )}
      </dl>
    </div>
  );
}
