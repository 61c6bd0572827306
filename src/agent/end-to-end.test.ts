// The whole flow with the reference agent as the device: enroll with a key created through the
// API, connect the socket, and answer live queries through the service from its sample log.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser } from '../../test/support/factory.js';
import { as, assertProblem, loginWithMfa, type Session } from '../../test/support/clients.js';
import { startAgent, type RunningAgent } from './agent.js';

describe('reference agent end to end', () => {
  let t: TestApp;
  let admin: Session;
  let agent: RunningAgent;
  const call = (url: string) => as(t.app, admin)({ method: 'GET', url });

  before(async () => {
    t = await testApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const org = await createOrg(t.db, (await createPartner(t.db)).id);
    admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
    const key = (await as(t.app, admin)({ method: 'POST', url: '/api/v1/enrollment-keys', payload: { name: 'e2e' } })).json();
    agent = await startAgent({
      server: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
      enrollmentKey: key.key,
      statePath: path.join(mkdtempSync(path.join(os.tmpdir(), 'dms-agent-')), 'state.json'),
      hostname: 'e2e-host',
      sampleSeed: 7,
      log: () => {},
    });
    await agent.connected();
  });
  after(async () => {
    await agent?.stop();
    await t.close();
  });

  it('answers live queries from its sample event log, filters and paging honoured', async () => {
    const base = `/api/v1/devices/${agent.deviceId}/live/eventlogs`;
    const logs = (await call(base)).json().data as { name: string; recordCount: number }[];
    assert.deepEqual(logs.map((l) => l.name).sort(), ['Application', 'Security', 'Setup', 'System']);
    assert.equal((await call(`${base}/system`)).json().data.name, 'System');
    assertProblem(await call(`${base}/Nope`), 404, 'NOT_FOUND');
    const page = (await call(`${base}/System/events?level=error&limit=5`)).json();
    assert.equal(page.data.length, 5);
    assert.ok(page.data.every((e: { level: string; computer: string }) => e.level === 'error' && e.computer === 'e2e-host'));
    assert.equal(page.pagination.hasMore, true);
    const first = page.data[0] as { recordId: number; eventId: number };
    assert.deepEqual((await call(`${base}/System/events/${first.recordId}`)).json().data.recordId, first.recordId);
    const byId = (await call(`${base}/System/events?eventId=${first.eventId}&limit=500`)).json().data as { eventId: number }[];
    assert.ok(byId.length > 0 && byId.every((e) => e.eventId === first.eventId));
    assertProblem(await call(`${base}/System/events/999999999`), 404, 'NOT_FOUND');
    const device = (await call(`/api/v1/devices/${agent.deviceId}`)).json();
    assert.deepEqual([device.status, device.hostname], ['online', 'e2e-host']);
  });
});
