// The device's own record, every field of GET /devices/{id}, and its actions for users with devices:write.
import { Link } from 'react-router';
import { formatDateTime } from '../../ui/format';
import { DeviceActions } from './device-actions';
import { DeviceStatus } from './device-status';
import type { Device } from './device';

export function osLabel(device: Pick<Device, 'osType' | 'osVersion' | 'architecture'>): string {
  const name = { windows: 'Windows', macos: 'macOS', linux: 'Linux' }[device.osType] ?? device.osType;
  return `${name} ${device.osVersion} (${device.architecture})`;
}

export function DeviceOverview({ device, orgName, siteName, canWrite, onMoved }: {
  device: Device;
  orgName: string | undefined;
  siteName: string | undefined;
  canWrite: boolean;
  onMoved: (notice: string) => void;
}) {
  return (
    <>
    <section className="panel" aria-labelledby="overview-title">
      <h2 id="overview-title">Overview</h2>
      <dl className="props">
        <dt>Hostname</dt><dd>{device.hostname}</dd>
        <dt>Status</dt><dd><DeviceStatus device={device} /></dd>
        <dt>Last seen</dt><dd>{device.lastSeenAt ? formatDateTime(device.lastSeenAt) : 'never'}</dd>
        <dt>Last source IP</dt><dd>{device.lastSourceIp ?? '—'}</dd>
        <dt>Operating system</dt><dd>{osLabel(device)}</dd>
        <dt>OS type</dt><dd>{device.osType}</dd>
        <dt>OS version</dt><dd>{device.osVersion}</dd>
        <dt>Architecture</dt><dd>{device.architecture}</dd>
        <dt>Agent version</dt><dd>{device.agentVersion}</dd>
        <dt>Organization</dt><dd><Link to={`/organizations/${device.orgId}`}>{orgName ?? 'Organization'}</Link> <code>{device.orgId}</code></dd>
        <dt>Site</dt><dd><Link to={`/sites/${device.siteId}`}>{siteName ?? 'Site'}</Link> <code>{device.siteId}</code></dd>
        <dt>Device id</dt><dd><code>{device.id}</code></dd>
        <dt>Agent id</dt><dd><code>{device.agentId}</code></dd>
        <dt>Enrolled</dt><dd>{formatDateTime(device.enrolledAt)}</dd>
        <dt>Created</dt><dd>{formatDateTime(device.createdAt)}</dd>
        <dt>Updated</dt><dd>{formatDateTime(device.updatedAt)}</dd>
      </dl>
    </section>
    {canWrite && <DeviceActions device={device} siteName={siteName} onMoved={onMoved} />}
    </>
  );
}

export function NoDeviceAccess() {
  return (
    <main id="main" className="page">
      <h1>Devices</h1>
      <p className="state state-error" role="alert">Your role does not include <code>devices:read</code>, so devices are not shown to you.</p>
      <Link to="/">Go to the overview</Link>
    </main>
  );
}
