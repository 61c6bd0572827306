// The hash chain's integrity for one organization (or the platform chain): GET /audit-logs/verify.
// One line (verdict, rows checked, pending) with "Details" to expand the rest; a broken chain opens
// the details by itself.
import { useEffect, useId, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { api, call } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ErrorMessage, Spinner } from '../../ui/states';
import { useLoad } from '../../ui/use-load';
import type { ChainReport } from './query';

/**
 * `orgId` '' verifies the caller's own chain when `needsOrg` is false (organization scope); a partner
 * or system caller must name one, so the line asks for it.
 */
export function ChainStatus({ orgId, needsOrg, label }: { orgId: string; needsOrg: boolean; label: string }) {
  const [checkedAt, setCheckedAt] = useState<string | null>(null);
  const [open, setOpen] = useState<boolean | null>(null);
  const detailsId = useId();
  const report = useLoad(
    async () => (needsOrg && !orgId ? null : call(api.GET('/api/v1/audit-logs/verify', { params: { query: orgId ? { orgId } : {} } }))),
    [orgId, needsOrg],
  );
  useEffect(() => setCheckedAt(report.data ? new Date().toISOString() : null), [report.data]);
  const expanded = open ?? Boolean(report.data && !report.data.valid);
  const title = <h2 id="chain-title" className="chain-title">Chain integrity{needsOrg && orgId ? <>: {label}</> : null}</h2>;

  if (needsOrg && !orgId) {
    return (
      <section className="panel chain-status" aria-labelledby="chain-title">
        <div className="chain-line">
          {title}
          <span className="hint">Choose an organization (or the platform) below to verify its hash chain.</span>
        </div>
      </section>
    );
  }

  return (
    <section className="panel chain-status" aria-labelledby="chain-title" aria-busy={report.loading || undefined}>
      <div className="chain-line">
        {title}
        {report.error ? null : report.data ? (
          <ChainSummary report={report.data} stale={report.loading} />
        ) : (
          <Spinner label="Verifying the chain…" />
        )}
        <span className="chain-line-actions">
          {report.data && (
            <button type="button" className="link" aria-expanded={expanded} aria-controls={detailsId} onClick={() => setOpen(!expanded)}>
              {expanded ? 'Hide chain details' : 'Chain details'}
            </button>
          )}
          <button type="button" onClick={report.reload} disabled={report.loading}>
            {report.loading ? 'Verifying…' : 'Verify again'}
          </button>
        </span>
      </div>
      <ErrorMessage error={report.error} />
      {report.data && (
        <div id={detailsId} hidden={!expanded} className="chain-details">
          <ChainReportView report={report.data} stale={report.loading} />
          {checkedAt && !report.loading && !report.error && <p className="hint">Checked {formatDateTime(checkedAt)}</p>}
        </div>
      )}
    </section>
  );
}

function ChainSummary({ report, stale }: { report: ChainReport; stale: boolean }) {
  const { valid, checked, pending, brokenAt } = report;
  return (
    <p className={`chain-verdict ${valid ? 'chain-valid' : 'chain-broken'}${stale ? ' stale' : ''}`} role="status">
      <span aria-hidden="true">{valid ? '✔' : '✘'}</span>{' '}
      <strong>{valid ? 'Valid' : 'Broken'}</strong>
      {!valid && brokenAt && <> from seq {brokenAt.seq}</>}
      {' · '}{checked} {checked === 1 ? 'row' : 'rows'} checked
      {' · '}{pending} pending
    </p>
  );
}

function ChainReportView({ report, stale }: { report: ChainReport; stale: boolean }) {
  const { valid, checked, firstSeq, lastSeq, anchor, pending, brokenAt } = report;
  const { search } = useLocation();
  return (
    <div className={stale ? 'stale' : undefined}>
      <p>
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
