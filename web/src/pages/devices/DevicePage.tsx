// One device: its record and, as tabs with their own addresses, its diagnostic logs, its stored event
// logs and the live event-log viewer (/devices/:id, /diagnostics, /events, /live[/:logName[/:recordId]]).
// Every one of them, the live queries too, needs devices:read: without it the section shows nothing.
import { Link, NavLink, Route, Routes, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { useCan } from '../../session/session';
import { formatDateTime } from '../../ui/format';
import { Empty, Loadable } from '../../ui/states';
import { useLoad, usePolling } from '../../ui/use-load';
import { DeviceOverview, NoDeviceAccess } from './DeviceOverview';
import { DiagnosticLogs } from './DiagnosticLogs';
import { StoredEventLogs } from './StoredEventLogs';
import { LiveEvents } from './live/LiveEvents';
import { LiveLogs } from './live/LiveLogs';
import { LiveRecord } from './live/LiveRecord';
import { loadOrganizations, loadSite } from '../../api/directory';
import { DeviceStatus } from './device-status';
import { RouteNotice } from '../tenancy/page-notices';
import type { Device } from './device';
import { useNotice } from '../../ui/notice';

const STATUS_REFRESH_MS = 10_000;

export function DevicePage() {
  const can = useCan();
  const { deviceId = '' } = useParams();
  if (!can('devices:read')) return <NoDeviceAccess />;
  return <DeviceScreens key={deviceId} deviceId={deviceId} />;
}

function DeviceScreens({ deviceId }: { deviceId: string }) {
  const device = useLoad(() => call(api.GET('/api/v1/devices/{id}', { params: { path: { id: deviceId } } })), [deviceId]);
  // The status is the server's (heartbeats): re-read it as the list does, so the page never lags it.
  usePolling(device.reload, STATUS_REFRESH_MS);
  return (
    <main id="main" className="page">
      <p><Link to="/devices">← All devices</Link></p>
      {/* 400: not a device id at all; 404: no such device, or one outside the caller's organizations. */}
      {device.error && [400, 404].includes(device.error.status) ? (
        <>
          <h1>Device not found</h1>
          <Empty>There is no device with the id “{deviceId}” among the devices you can see.</Empty>
        </>
      ) : <Loadable state={device}>
        {(d) => <DeviceTabs device={d} reloadDevice={device.reload} />}
      </Loadable>}
    </main>
  );
}

function DeviceTabs({ device, reloadDevice }: { device: Device; reloadDevice: () => void }) {
  // Names are a courtesy: the ids stay on screen when they cannot be read.
  const orgName = useLoad(async () => (await loadOrganizations()).find((o) => o.id === device.orgId)?.name, [device.orgId]).data;
  const siteName = useLoad(async () => (await loadSite(device.siteId)).name, [device.siteId]).data;
  const base = `/devices/${device.id}`;
  const live = { device, reloadDevice };
  const can = useCan();
  const [notice, setNotice] = useNotice();
  return (
    <>
      <h1>{device.hostname} <DeviceStatus device={device} /></h1>
      <p className="hint">
        <Link to={`/organizations/${device.orgId}`}>{orgName ?? 'Organization'}</Link>
        {' · '}<Link to={`/sites/${device.siteId}`}>{siteName ?? 'Site'}</Link>
        {' · '}Last seen {device.lastSeenAt ? formatDateTime(device.lastSeenAt) : 'never'}
      </p>
      <RouteNotice />
      {notice && <p className="notice" role="status">{notice}</p>}
      <nav className="tabs" aria-label="Device sections">
        <NavLink to={base} end>Overview</NavLink>
        <NavLink to={`${base}/diagnostics`}>Diagnostic logs</NavLink>
        <NavLink to={`${base}/events`}>Event logs</NavLink>
        <NavLink to={`${base}/live`}>Live event logs</NavLink>
      </nav>
      <Routes>
        <Route index element={<DeviceOverview device={device} orgName={orgName} siteName={siteName} canWrite={can('devices:write')} onMoved={(text) => { setNotice(text); reloadDevice(); }} />} />
        <Route path="diagnostics" element={<DiagnosticLogs deviceId={device.id} />} />
        <Route path="events" element={<StoredEventLogs deviceId={device.id} />} />
        <Route path="live" element={<LiveLogs {...live} />} />
        <Route path="live/:logName" element={<LiveEvents {...live} />} />
        <Route path="live/:logName/:recordId" element={<LiveRecord {...live} />} />
        <Route path="*" element={<Empty>This device has no such page. <Link to={base}>Go to its overview</Link></Empty>} />
      </Routes>
    </>
  );
}
