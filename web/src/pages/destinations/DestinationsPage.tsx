// Event destinations (API.md §9): the list with its organization filter, and create. A webhook's
// signing secret replaces the screen once after create; then the new destination's page opens.
import { useRef, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { useCan, useUser } from '../../session/session';
import { formatDateTime } from '../../ui/format';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useLoad, usePolling } from '../../ui/use-load';
import { Gated, WriteGateNote, useWriteGate } from '../../ui/write-gate';
import { NotAvailable, RouteNotice } from '../tenancy/page-notices';
import { CoverageFilter, canCoverAnything, initialCover, useDirectory } from './coverage';
import { SECRET_WARNING, coverageLabel, type NewDestination } from './destination';
import { DestinationCreateForm } from './destination-form';
import { DestinationStatus, OneTimeSecret, PageHeading, TableScroll } from './parts';

const INTRO = 'Event destinations receive the audit events of what they cover as soon as each is sealed: a webhook gets a signed HTTPS POST per event, a syslog collector (SIEM) an RFC 5424 message. Every event arrives at least once and in order; a failed delivery is retried and holds back the later events of its chain.';

export function DestinationsPage() {
  const can = useCan();
  if (!can('organizations:read')) {
    return <NotAvailable title="Event destinations">Event destinations are not available for your account: it lacks the organizations:read permission.</NotAvailable>;
  }
  return <DestinationList />;
}

function DestinationList() {
  const user = useUser();
  const navigate = useNavigate();
  const location = useLocation();
  // Arrived from a delete: the heading takes the focus, and the notice under it says what happened.
  const [arrived] = useState(() => Boolean((location.state as { notice?: string } | null)?.notice));
  const query = useListQuery(['orgId', 'partnerId']);
  const { orgId, partnerId } = query.filters;
  const list = useLoad(() => call(api.GET('/api/v1/event-destinations', {
    params: { query: { page: query.page, limit: PAGE_SIZE, orgId: orgId || undefined, partnerId: partnerId || undefined } },
  })), [query.key]);
  // Statuses change with deliveries, not with anything done here.
  usePolling(list.reload, 10_000);
  const directory = useDirectory();
  const gate = useWriteGate('event destinations');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<NewDestination | null>(null);
  const newButton = useRef<HTMLButtonElement>(null);

  const openCreated = (d: NewDestination) => navigate(`/destinations/${d.id}`, { state: { notice: `Destination “${d.name}” created.` } });
  if (created?.secret) {
    return (
      <main id="main" className="page destinations">
        <h1>Event destinations</h1>
        <OneTimeSecret title={`Webhook “${created.name}” created`} secret={created.secret} warning={SECRET_WARNING} onDone={() => openCreated(created)} />
      </main>
    );
  }

  const coversSomething = directory.data ? canCoverAnything(user.scope, directory.data) : false;
  return (
    <main id="main" className="page destinations">
      <PageHeading focus={arrived}>Event destinations</PageHeading>
      <p>{INTRO}</p>
      <RouteNotice />
      <WriteGateNote gate={gate} />
      <ErrorMessage error={directory.error} onRetry={directory.reload} />

      {creating && directory.data ? (
        <DestinationCreateForm
          directory={directory.data}
          initialCover={initialCover(user, directory.data, query.filters)}
          onCreated={(d) => (d.secret ? setCreated(d) : openCreated(d))}
          onCancel={() => { setCreating(false); requestAnimationFrame(() => newButton.current?.focus()); }}
        />
      ) : (
        <div className="actions destinations-new">
          <Gated allowed={gate.allowed} label="New destination">
            <button ref={newButton} type="button" className="primary" disabled={!coversSomething} onClick={() => setCreating(true)}>New destination</button>
          </Gated>
          {directory.data && !coversSomething && <span className="hint">You reach no organization, so there is nothing for a destination to cover.</span>}
        </div>
      )}

      {directory.data && <CoverageFilter directory={directory.data} orgId={orgId} partnerId={partnerId} onChange={(next) => query.setFilters(next)} />}

      <Loadable state={list} isEmpty={(body) => body.data.length === 0} empty={orgId || partnerId ? 'No destination matches this filter.' : 'No event destinations yet.'}>
        {(body) => (
          <>
            <TableScroll label="Event destinations table">
              <table className="destinations-table" aria-busy={list.loading}>
                <caption className="hint">Event destinations, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Kind</th>
                    <th scope="col">URL</th>
                    <th scope="col">Covers</th>
                    <th scope="col">Status</th>
                    <th scope="col">Last success</th>
                  </tr>
                </thead>
                <tbody>
                  {body.data.map((d) => (
                    <tr key={d.id}>
                      <th scope="row"><Link to={`/destinations/${d.id}`}>{d.name}</Link></th>
                      <td>{d.kind}</td>
                      <td className="destinations-url"><code>{d.url}</code></td>
                      <td>{coverageLabel(d, directory.data)}</td>
                      <td><DestinationStatus destination={d} /></td>
                      <td>{formatDateTime(d.lastSuccessAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager list={body} onPage={query.setPage} label="Event destination pages" />
          </>
        )}
      </Loadable>
    </main>
  );
}
