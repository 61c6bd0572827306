// The landing page: what needs a technician's attention, each part only for those who may read it.
// Devices online and offline per organization (devices:read), the latest failed or denied audit
// entries and each organization's chain status (audit:read), and failing event destinations
// (organizations:read, as the destinations page). Per-organization counts and verifications load a
// few at a time, for the first organizations only (ORG_CAP), never all at once.
import './overview.css';
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ApiError, api, call } from '../api/client';
import type { Organization } from '../api/directory';
import type { Ok } from '../api/types';
import { useCan, useUser } from '../session/session';
import { formatDateTime } from '../ui/format';
import { ErrorMessage, Loadable } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { useLoad, type Loaded } from '../ui/use-load';
import { actionLabel } from './audit/action-labels';
import { actorTypeLabel } from './audit/AuditTable';

type LogEntry = Ok<'/api/v1/audit-logs/logs/{id}', 'get'>;
type ChainReport = Ok<'/api/v1/audit-logs/verify', 'get'>;
type Destination = Ok<'/api/v1/event-destinations/{id}', 'get'>;

/** Organizations shown per section; beyond them, a link to the organizations list. */
const ORG_CAP = 25;
/** Organizations whose two device counts load at once (so at most 4 requests in flight). */
const COUNT_CONCURRENCY = 2;
/** Verifications at once: the server runs at most 2 (API: /audit-logs/verify). */
const VERIFY_CONCURRENCY = 2;
/** Audit entries read to find the failed and denied ones (no list route filters by result). */
const AUDIT_SCAN = 100;
const FAILURES_SHOWN = 10;
/** Destination pages read at most (100 each) to find the failing ones. */
const DESTINATION_PAGES = 10;

interface OrgsInReach { orgs: Organization[]; total: number }

export function OverviewPage() {
  const user = useUser();
  const can = useCan();
  const devices = can('devices:read');
  const audit = can('audit:read');
  const destinations = can('organizations:read');
  const orgs = useLoad<OrgsInReach | null>(
    () => (devices || audit ? loadOrgs(user.scope === 'organization') : Promise.resolve(null)),
    [devices, audit, user.scope],
  );
  return (
    <main id="main" className="page overview">
      <h1>Welcome, {user.name}</h1>
      <p className="hint">Signed in as {user.email}, {user.role} in {user.scope} scope.</p>
      {devices && <DeviceCounts orgs={orgs} />}
      {audit && <ChainStatuses orgs={orgs} />}
      {audit && <LatestFailures />}
      {destinations && <FailingDestinations />}
    </main>
  );
}

/** The first organizations within reach: organization scope reads its own (GET /orgs), others the paginated list. */
async function loadOrgs(own: boolean): Promise<OrgsInReach> {
  if (own) {
    const { data } = await call(api.GET('/api/v1/orgs'));
    return { orgs: data.slice(0, ORG_CAP), total: data.length };
  }
  const body = await call(api.GET('/api/v1/orgs/organizations', { params: { query: { page: 1, limit: ORG_CAP } } }));
  return { orgs: body.data, total: body.pagination.total ?? body.data.length };
}

function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, 'CLIENT', (err as Error).message);
}

type Cell<T> = { state: 'waiting' } | { state: 'done'; value: T } | { state: 'failed'; error: ApiError };

/** The organizations whose cell failed (those `counts` accepts), and the first one's error to show. */
function failuresOf<T>(ids: readonly string[], cells: ReadonlyMap<string, Cell<T>>, counts: (error: ApiError) => boolean = () => true) {
  const failed = ids.filter((id) => {
    const cell = cells.get(id);
    return cell?.state === 'failed' && counts(cell.error);
  });
  const first = failed.length ? cells.get(failed[0]!) : undefined;
  return { failed, firstError: first?.state === 'failed' ? first.error : null };
}

/**
 * Loads `load(id)` for every id, `limit` at a time, each result shown as it arrives. A new set of
 * ids (or leaving the page) drops whatever is still under way; `retry` loads the given ids again.
 */
function useBounded<T>(ids: readonly string[] | null, limit: number, load: (id: string) => Promise<T>) {
  const [cells, setCells] = useState<ReadonlyMap<string, Cell<T>>>(new Map());
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const run = useCallback((todo: readonly string[], gen: number) => {
    setCells((previous) => {
      const next = new Map(previous);
      for (const id of todo) next.set(id, { state: 'waiting' });
      return next;
    });
    let index = 0;
    const worker = async () => {
      while (index < todo.length && gen === generation.current) {
        const id = todo[index++]!;
        let cell: Cell<T>;
        try {
          cell = { state: 'done', value: await loadRef.current(id) };
        } catch (err) {
          cell = { state: 'failed', error: asApiError(err) };
        }
        if (gen !== generation.current) return;
        setCells((previous) => new Map(previous).set(id, cell));
      }
    };
    for (let i = 0; i < Math.min(limit, todo.length); i++) void worker();
  }, [limit]);

  const key = ids ? ids.join(',') : null;
  useEffect(() => {
    const gen = ++generation.current;
    setCells(new Map());
    if (ids) run(ids, gen);
    return () => {
      generation.current++;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, run]);

  const retry = useCallback((todo: readonly string[]) => run(todo, generation.current), [run]);
  return { cells, retry };
}

/** "25 of 40 organizations shown", with the way to the rest. */
function MoreOrganizations({ data }: { data: OrgsInReach }) {
  if (data.total <= data.orgs.length) return null;
  return (
    <p className="hint">
      The first {data.orgs.length} of {data.total} organizations. <Link to="/organizations">All organizations</Link>
    </p>
  );
}

function Section({ id, title, children, busy, wide }: { id: string; title: string; children: ReactNode; busy?: boolean; wide?: boolean }) {
  return (
    <section className={`panel overview-section${wide ? ' overview-wide' : ''}`} aria-labelledby={id} aria-busy={busy || undefined}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function OrgsLoadable({ orgs, children }: { orgs: Loaded<OrgsInReach | null>; children: (data: OrgsInReach) => ReactNode }) {
  return (
    <Loadable state={orgs} isEmpty={(data) => !data || data.orgs.length === 0} empty="No organizations within your reach yet.">
      {(data) => children(data!)}
    </Loadable>
  );
}

// --- devices ------------------------------------------------------------------------------------

interface Counts { online: number | null; offline: number | null }

async function countDevices(orgId: string): Promise<Counts> {
  const count = async (status: 'online' | 'offline') =>
    (await call(api.GET('/api/v1/devices', { params: { query: { orgId, status, limit: 1 } } }))).pagination.total;
  const [online, offline] = await Promise.all([count('online'), count('offline')]);
  return { online, offline };
}

function DeviceCounts({ orgs }: { orgs: Loaded<OrgsInReach | null> }) {
  return (
    <Section id="overview-devices" title="Devices online and offline">
      <OrgsLoadable orgs={orgs}>{(data) => <DeviceCountTable data={data} />}</OrgsLoadable>
    </Section>
  );
}

function DeviceCountTable({ data }: { data: OrgsInReach }) {
  const ids = data.orgs.map((o) => o.id);
  const { cells, retry } = useBounded(ids, COUNT_CONCURRENCY, countDevices);
  const { failed, firstError } = failuresOf(ids, cells);
  return (
    <>
      <div className="table-scroll">
        <table className="overview-table" aria-label="Devices per organization">
          <thead>
            <tr>
              <th scope="col">Organization</th>
              <th scope="col" className="num">Online</th>
              <th scope="col" className="num">Offline</th>
            </tr>
          </thead>
          <tbody>
            {data.orgs.map((org) => {
              const cell = cells.get(org.id);
              return (
                <tr key={org.id}>
                  <th scope="row"><Link to={`/organizations/${org.id}`}>{org.name}</Link></th>
                  <CountCell orgId={org.id} status="online" cell={cell} />
                  <CountCell orgId={org.id} status="offline" cell={cell} />
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ErrorMessage error={firstError} onRetry={() => retry(failed)} />
      <MoreOrganizations data={data} />
    </>
  );
}

function CountCell({ orgId, status, cell }: { orgId: string; status: 'online' | 'offline'; cell: Cell<Counts> | undefined }) {
  if (!cell || cell.state === 'waiting') return <td className="num hint">counting…</td>;
  if (cell.state === 'failed') return <td className="num hint">not counted</td>;
  const n = cell.value[status];
  return (
    <td className="num">
      <Link to={`/devices?orgId=${encodeURIComponent(orgId)}&status=${status}`} aria-label={`${n ?? 'Unknown'} ${status}`} className={`count count-${status}${n ? '' : ' count-zero'}`}>
        {n ?? '?'}
      </Link>
    </td>
  );
}

// --- audit: failures ----------------------------------------------------------------------------

async function loadFailures(): Promise<LogEntry[]> {
  const body = await call(api.GET('/api/v1/audit-logs/logs', { params: { query: { page: 1, limit: AUDIT_SCAN, skipCount: true } } }));
  return body.data.filter((e) => e.result !== 'success').slice(0, FAILURES_SHOWN);
}

function LatestFailures() {
  const failures = useLoad(loadFailures, []);
  return (
    <Section id="overview-failures" title="Latest failed or denied audit entries" busy={failures.loading} wide>
      <p className="hint">Among the newest {AUDIT_SCAN} audit entries. <Link to="/audit">The whole audit log</Link></p>
      <Loadable state={failures} isEmpty={(list) => list.length === 0} empty={`No failed or denied entries among the newest ${AUDIT_SCAN}.`}>
        {(list) => (
          <div className="table-scroll">
            <table className="overview-table" aria-label="Failed or denied audit entries">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Result</th>
                </tr>
              </thead>
              <tbody>
                {list.map((entry) => (
                  <tr key={entry.id}>
                    <td>
                      <Link to={`/audit/${entry.id}`} title="Open this entry">
                        <time dateTime={entry.timestamp}>{formatDateTime(entry.timestamp)}</time>
                      </Link>
                    </td>
                    <td>{actionLabel(entry.action)}<div className="hint"><code>{entry.action}</code></div></td>
                    <td>{actorOf(entry)}</td>
                    <td><StatusBadge status={entry.result} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loadable>
    </Section>
  );
}

function actorOf(entry: LogEntry): string {
  const who = entry.user.name ?? entry.actorEmail ?? entry.user.email;
  if (!who) return actorTypeLabel(entry.actorType);
  return entry.actorType === 'user' ? who : `${who} (${actorTypeLabel(entry.actorType)})`;
}

// --- audit: chains ------------------------------------------------------------------------------

/** Organization scope verifies its own chain without naming it, as the audit page does. */
const verifyChain = (orgId: string, own: boolean): Promise<ChainReport> =>
  call(api.GET('/api/v1/audit-logs/verify', { params: { query: own ? {} : { orgId } } }));

/** The server is busy verifying (429, or 503 while it cannot take more): not an error to alarm about. */
const isBusy = (error: ApiError) => error.status === 429 || error.status === 503;

function ChainStatuses({ orgs }: { orgs: Loaded<OrgsInReach | null> }) {
  const own = useUser().scope === 'organization';
  return (
    <Section id="overview-chains" title="Audit chain status">
      <OrgsLoadable orgs={orgs}>{(data) => <ChainTable data={data} own={own} />}</OrgsLoadable>
    </Section>
  );
}

function ChainTable({ data, own }: { data: OrgsInReach; own: boolean }) {
  const ids = data.orgs.map((o) => o.id);
  const { cells, retry } = useBounded(ids, VERIFY_CONCURRENCY, (id) => verifyChain(id, own));
  const { failed, firstError } = failuresOf(ids, cells, (error) => !isBusy(error));
  return (
    <>
      <div className="table-scroll">
        <table className="overview-table" aria-label="Chain status per organization">
          <thead>
            <tr>
              <th scope="col">Organization</th>
              <th scope="col">Chain</th>
            </tr>
          </thead>
          <tbody>
            {data.orgs.map((org) => (
              <tr key={org.id}>
                <th scope="row"><Link to={`/audit?orgId=${encodeURIComponent(org.id)}`} title="Open this organization's audit log">{org.name}</Link></th>
                <td><ChainCell cell={cells.get(org.id)} onRetry={() => retry([org.id])} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorMessage error={firstError} onRetry={() => retry(failed)} />
      <MoreOrganizations data={data} />
    </>
  );
}

function ChainCell({ cell, onRetry }: { cell: Cell<ChainReport> | undefined; onRetry: () => void }) {
  if (!cell || cell.state === 'waiting') return <span className="hint">checking…</span>;
  if (cell.state === 'failed') {
    return (
      <span className="hint">
        {isBusy(cell.error) ? 'not checked now' : 'not checked'}
        <button type="button" className="link" onClick={onRetry}>Check again</button>
      </span>
    );
  }
  const { valid, checked, pending, brokenAt } = cell.value;
  if (!valid) {
    return <span className="chain-word chain-word-broken"><span aria-hidden="true">✘ </span>Broken{brokenAt && <> from seq {brokenAt.seq}</>}</span>;
  }
  if (checked === 0 && pending > 0) return <span className="chain-word chain-word-pending">Pending <span className="hint">· {pending} not sealed yet</span></span>;
  return (
    <span className="chain-word chain-word-valid">
      <span aria-hidden="true">✔ </span>Valid
      <span className="hint"> · {checked} {checked === 1 ? 'entry' : 'entries'}{pending > 0 && <>, {pending} pending</>}</span>
    </span>
  );
}

// --- event destinations -------------------------------------------------------------------------

interface Failing { failing: Destination[]; partial: boolean }

async function loadFailing(): Promise<Failing> {
  const failing: Destination[] = [];
  for (let page = 1; page <= DESTINATION_PAGES; page++) {
    const body = await call(api.GET('/api/v1/event-destinations', { params: { query: { page, limit: 100 } } }));
    failing.push(...body.data.filter((d) => d.status === 'failing'));
    const pages = body.pagination.totalPages ?? (body.data.length < 100 ? page : page + 1);
    if (body.data.length < 100 || page >= pages) return { failing, partial: false };
  }
  return { failing, partial: true };
}

/** Shown only when a destination fails (or the list cannot be read). */
function FailingDestinations() {
  const list = useLoad(loadFailing, []);
  if (!list.error && (!list.data || list.data.failing.length === 0)) return null;
  return (
    <Section id="overview-destinations" title="Failing event destinations" wide>
      {list.error ? <ErrorMessage error={list.error} onRetry={list.reload} /> : list.data && (
        <>
          <p className="hint">These have not delivered for 24 hours; later events wait behind the failed one.</p>
          <ul className="overview-list">
            {list.data.failing.map((d) => (
              <li key={d.id}>
                <Link to={`/destinations/${d.id}`}>{d.name}</Link> <StatusBadge status={d.status} />
                <span className="hint"> {d.kind} · {d.lastSuccessAt ? <>last delivered {formatDateTime(d.lastSuccessAt)}</> : 'never delivered'}</span>
                {d.lastError && <div className="hint overview-error">{d.lastError}</div>}
              </li>
            ))}
          </ul>
          {list.data.partial && <p className="hint">Only the first {DESTINATION_PAGES * 100} destinations were read. <Link to="/destinations">All destinations</Link></p>}
        </>
      )}
    </Section>
  );
}
