// A destination's delivery log (GET /:id/deliveries): attempts of the last 7 days, newest first, read
// again every few seconds while the page is visible, since the sender adds to it on its own.
import { api, call } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad, usePolling } from '../../ui/use-load';
import { orgLabel, type Destination, type Directory } from './destination';
import { TableScroll } from './parts';

const REFRESH_MS = 5000;

export function DeliveryLog({ destination, directory }: { destination: Destination; directory: Directory | undefined }) {
  const { page, key, setPage } = useListQuery([], 'deliveriesPage');
  const list = useLoad(
    () => call(api.GET('/api/v1/event-destinations/{id}/deliveries', { params: { path: { id: destination.id }, query: { page, limit: PAGE_SIZE } } })),
    [destination.id, key],
  );
  usePolling(list.reload, REFRESH_MS);
  // A destination covering several chains: a seq means something only with its chain.
  const chains = destination.orgId === null;

  return (
    <section className="destinations-section" aria-labelledby="deliveries-title">
      <div className="destinations-heading">
        <h2 id="deliveries-title">Delivery log</h2>
        <button type="button" onClick={list.reload}>Refresh the delivery log</button>
      </div>
      <p className="hint">Every attempt of the last 7 days, newest first; refreshed every {REFRESH_MS / 1000} seconds. Test events are not listed.</p>
      <Loadable state={list} isEmpty={(body) => body.data.length === 0 && page === 1} empty="No delivery attempts in the last 7 days.">
        {(body) => (
          <>
            <TableScroll label="Delivery log table">
              <table className="destinations-table" aria-busy={list.loading}>
                <caption className="hint">Delivery attempts to “{destination.name}”, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Action</th>
                    {chains && <th scope="col">Chain</th>}
                    <th scope="col">Seq</th>
                    <th scope="col">Attempt</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Status</th>
                    <th scope="col">Error</th>
                    <th scope="col">Duration</th>
                  </tr>
                </thead>
                <tbody>
                  {body.data.map((d) => (
                    <tr key={d.id}>
                      <td className="nowrap">{formatDateTime(d.attemptedAt)}</td>
                      <td><code>{d.action}</code></td>
                      {chains && <td>{d.orgId ? orgLabel(directory, d.orgId) : 'Platform'}</td>}
                      <td>{d.seq ?? '—'}</td>
                      <td>{d.attempt}</td>
                      <td><StatusBadge status={d.outcome} /></td>
                      <td>{d.responseStatus ?? '—'}</td>
                      <td className="destinations-error">{d.error ?? ''}</td>
                      <td className="nowrap">{d.durationMs.toLocaleString()} ms</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager list={body} onPage={setPage} label="Delivery log pages" />
          </>
        )}
      </Loadable>
    </section>
  );
}
