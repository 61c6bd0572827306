// What a user with devices:write may do to a device: move it to another site of its organization
// (PATCH /devices/{id} {siteId}) and decommission it (DELETE /devices/{id}: its agent token stops working).
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { loadSitesOf } from '../../api/directory';
import { ConfirmButton } from '../../ui/confirm';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction, useLoad } from '../../ui/use-load';
import type { Device } from './device';

export function DeviceActions({ device, siteName, onMoved }: { device: Device; siteName: string | undefined; onMoved: (notice: string) => void }) {
  const navigate = useNavigate();
  const sites = useLoad(() => loadSitesOf(device.orgId), [device.orgId]);
  const others = sites.data?.filter((s) => s.id !== device.siteId) ?? [];
  const [target, setTarget] = useState('');
  const move = useAction(async (siteId: string) => {
    const moved = await call(api.PATCH('/api/v1/devices/{id}', { params: { path: { id: device.id } }, body: { siteId } }));
    setTarget('');
    onMoved(`${moved.hostname} moved to the site ${sites.data?.find((s) => s.id === siteId)?.name ?? siteId}.`);
  });
  const decommission = useAction(async () => {
    await call(api.DELETE('/api/v1/devices/{id}', { params: { path: { id: device.id } } }));
    navigate('/devices', { state: { notice: `${device.hostname} decommissioned: its agent can no longer connect.` } });
  });

  return (
    <section className="panel device-actions" aria-labelledby="device-actions-title">
      <h2 id="device-actions-title">Actions</h2>
      <form
        className="device-move"
        aria-label="Move device"
        onSubmit={(e) => {
          e.preventDefault();
          if (target) void move.run(target);
        }}
      >
        <Field label="Move to another site" hint={siteName ? `Now at ${siteName}.` : undefined}>
          <select value={target} disabled={!sites.data || others.length === 0} onChange={(e) => setTarget(e.target.value)}>
            <option value="">{sites.data && others.length === 0 ? 'No other site in this organization' : 'Choose a site…'}</option>
            {others.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
          </select>
        </Field>
        <div className="actions">
          <button type="submit" className="primary" disabled={!target || move.pending}>{move.pending ? 'Moving…' : 'Move device'}</button>
        </div>
      </form>
      <ErrorMessage error={sites.error} onRetry={sites.reload} />
      <ErrorMessage error={move.error} />
      <div className="device-decommission">
        <ConfirmButton
          label="Decommission"
          name={`Decommission ${device.hostname}`}
          confirmLabel="Decommission device"
          question={<>Decommission <strong>{device.hostname}</strong>? Its agent's token stops working at once, so the agent can no longer report or answer queries. This cannot be undone: to manage the machine again, enroll it anew.</>}
          onConfirm={() => decommission.run()}
          disabled={decommission.pending}
        />
      </div>
      <ErrorMessage error={decommission.error} />
    </section>
  );
}
