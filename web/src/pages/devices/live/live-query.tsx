// What every live view shares: a query that travels to the device through its agent (seconds, up to
// the service's timeout), a Refresh that runs it again, and its failures told as what they are
// (API.md §2: 409 offline, 504 timeout, 502 agent failure or bad reply, 404 no such log or record).
import type { ReactNode } from 'react';
import type { ApiError } from '../../../api/client';
import { formatDateTime } from '../../../ui/format';
import { ErrorMessage, Spinner } from '../../../ui/states';
import { useLoad, type Loaded } from '../../../ui/use-load';
import type { Device } from '../device';
import { offlineSince } from '../device-status';

export interface LiveProps {
  device: Device;
  /** Re-reads the device record, so status and last-seen time are current after a refresh. */
  reloadDevice: () => void;
}

/** useLoad for a live query; `refresh` runs it again and re-reads the device with it. */
export function useLiveQuery<T>(load: () => Promise<T>, deps: unknown[], reloadDevice: () => void): Loaded<T> & { refresh: () => void } {
  const state = useLoad(load, deps);
  return { ...state, refresh: () => { reloadDevice(); state.reload(); } };
}

export function RefreshButton({ query }: { query: { loading: boolean; refresh: () => void } }) {
  return <button type="button" onClick={query.refresh} disabled={query.loading}>{query.loading ? 'Asking the device…' : 'Refresh'}</button>;
}

/**
 * The answer of a live query: a loading state while it travels (over the last answer, if any), the
 * failure as the user should read it, or `children` with the data.
 */
export function LiveResult<T>({ query, device, notFound, children }: {
  query: Loaded<T> & { refresh: () => void };
  device: Device;
  /** What a 404 means here: "This event log does not exist on the device." */
  notFound: string;
  children: (data: T) => ReactNode;
}) {
  const waiting = <Spinner label={`Asking ${device.hostname}… the query travels to the device and back, which can take a while.`} />;
  if (query.loading && (query.data === undefined || query.error)) return waiting;
  if (query.error) return <LiveError error={query.error} device={device} notFound={notFound} onRefresh={query.refresh} />;
  if (query.data === undefined) return waiting;
  return (
    <div aria-busy={query.loading}>
      {query.loading && waiting}
      {children(query.data)}
    </div>
  );
}

export function LiveError({ error, device, notFound, onRefresh }: { error: ApiError; device: Device; notFound: string; onRefresh: () => void }) {
  const said = describe(error, device, notFound);
  if (!said) return <ErrorMessage error={error} onRetry={onRefresh} />;
  return (
    <div className="state state-error devices-error" role="alert" data-code={error.code}>
      <p><strong>{said.headline}</strong> {said.more}</p>
      {/* A 409's detail repeats the status in the server's general words; the headline says it for this device. */}
      {error.message && error.status !== 409 && <p>Server detail: {error.message}</p>}
      <button type="button" className="link" onClick={onRefresh}>Try again</button>
    </div>
  );
}

function describe(error: ApiError, device: Device, notFound: string): { headline: string; more?: ReactNode } | null {
  switch (error.status) {
    // The device's status is the server's (heartbeats); a 409 while it still counts as reachable means
    // its agent's connection dropped, which is said as such rather than contradicting the badge.
    case 409:
      return device.status === 'offline'
        ? { headline: 'The device is offline.', more: <>It has been {offlineSince(device)}.</> }
        : { headline: 'The agent is not connected right now.', more: <>Its last heartbeat was at {device.lastSeenAt ? formatDateTime(device.lastSeenAt) : '—'}; try again in a moment.</> };
    case 504: return { headline: 'The device did not answer in time.' };
    case 502: return { headline: 'The agent failed to answer.' };
    case 404: return { headline: notFound };
    default: return null;
  }
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function logPath(deviceId: string, logName: string): string {
  return `/devices/${deviceId}/live/${encodeURIComponent(logName)}`;
}
