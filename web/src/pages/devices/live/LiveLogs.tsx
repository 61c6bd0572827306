// The device's event logs as its agent reports them now (SPEC "Live event log descriptor"):
// GET /devices/{deviceId}/live/eventlogs.
import { Link } from 'react-router';
import { api, call } from '../../../api/client';
import { formatDateTime } from '../../../ui/format';
import { Empty } from '../../../ui/states';
import { offlineSince } from '../device-status';
import { LiveResult, RefreshButton, bytes, logPath, useLiveQuery, type LiveProps } from './live-query';

export function LiveLogs({ device, reloadDevice }: LiveProps) {
  const logs = useLiveQuery(
    async () => (await call(api.GET('/api/v1/devices/{deviceId}/live/eventlogs', { params: { path: { deviceId: device.id } } }))).data,
    [device.id],
    reloadDevice,
  );
  return (
    <section aria-labelledby="live-title">
      <div className="devices-heading">
        <h2 id="live-title">Live event logs</h2>
        <RefreshButton query={logs} />
      </div>
      <p className="hint">
        Read from the device itself, through its agent, which must be connected.
        {device.status === 'offline' && <> This device is {offlineSince(device)}.</>}
      </p>
      <LiveResult query={logs} device={device} notFound="The device reported no event logs.">
        {(data) => data.length === 0 ? <Empty>The device reported no event logs.</Empty> : (
          <table>
            <thead>
              <tr><th scope="col">Log</th><th scope="col">Name</th><th scope="col">Records</th><th scope="col">Maximum size</th><th scope="col">Retention</th><th scope="col">Last written</th></tr>
            </thead>
            <tbody>
              {data.map((log) => (
                <tr key={log.name}>
                  <td><Link to={logPath(device.id, log.name)}>{log.displayName || log.name}</Link></td>
                  <td><code>{log.name}</code></td>
                  <td>{log.recordCount.toLocaleString()}</td>
                  <td title={`${log.maxSize} bytes`}>{bytes(log.maxSize)}</td>
                  <td>{log.retentionDays} days</td>
                  <td>{formatDateTime(log.lastWriteTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </LiveResult>
    </section>
  );
}
