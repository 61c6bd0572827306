// The device's one status, as the server computes it from heartbeats (offline after 180 s without
// one): every place on the device page says it the same way, with the time it went quiet.
import { formatDateTime } from '../../ui/format';
import { StatusBadge } from '../../ui/status-badge';
import type { Device } from './device';

/** "offline since …" (or "never seen") for an offline device; '' for an online one. */
export function offlineSince(device: Pick<Device, 'status' | 'lastSeenAt'>): string {
  if (device.status !== 'offline') return '';
  return device.lastSeenAt ? `offline since ${formatDateTime(device.lastSeenAt)}` : 'offline, never seen';
}

/** The badge, and for an offline device the time after it: "offline since …" read together. */
export function DeviceStatus({ device }: { device: Pick<Device, 'status' | 'lastSeenAt'> }) {
  const since = offlineSince(device).replace(/^offline,? /, '');
  return (
    <span className="device-status" data-status={device.status}>
      <StatusBadge status={device.status} />
      {since && <span className="hint"> {since}</span>}
    </span>
  );
}
