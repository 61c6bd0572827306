// A technician's day in headless Chromium: move a device to another site and find it on that site's
// page; decommission one behind the confirmation dialog (Escape and Cancel keep it); follow device →
// site → organization; search the devices, sites and organizations lists (the search and the page size
// live in the address); and an offline device reads offline everywhere on its page. Tenants and
// devices are seeded through the API; a partner technician (devices:write, no MFA needed) drives it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN, apiCall, cannotRun, launchBrowser, screenshots, startService, type Service, adminWithMfa, heartbeat, type Enrolled } from './harness.js';

const skip = cannotRun();
if (skip && process.env.CI) throw new Error(`the console's browser tests must run in CI: ${skip}`);
const TECH = { email: 'tess@northwind.test', password: 'a technician password 123' };

describe('web console: device actions, site devices, list search', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shot: (name: string) => Promise<void>;
  const pageErrors: string[] = [];
  const ids = {} as { org: string; otherOrg: string; main: string; branch: string };
  const devices = {} as Record<'reception' | 'lab' | 'till' | 'archive', Enrolled>;

  before(async () => {
    service = await startService();
    const token = await adminWithMfa(service);
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Northwind MSP', slug: 'northwind-msp' }, token);
    ids.org = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Contoso Dental', slug: 'contoso-dental' }, token)).id;
    ids.otherOrg = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Fabrikam Labs', slug: 'fabrikam-labs' }, token)).id;
    ids.main = (await apiCall<{ id: string }>(service, 'POST', '/orgs/sites', { orgId: ids.org, name: 'Main office' }, token)).id;
    ids.branch = (await apiCall<{ id: string }>(service, 'POST', '/orgs/sites', { orgId: ids.org, name: 'Branch office' }, token)).id;
    await apiCall(service, 'POST', '/orgs/sites', { orgId: ids.otherOrg, name: 'Lab floor' }, token);
    await apiCall(service, 'POST', '/users', { ...TECH, name: 'Tess Technician', scope: 'partner', partnerId: partner.id, role: 'technician', orgAccess: 'all' }, token);
    const { key } = await apiCall<{ key: string }>(service, 'POST', '/enrollment-keys', { orgId: ids.org, siteId: ids.main, name: 'office', maxUsage: 10 }, token);
    for (const [name, hostname] of [['reception', 'reception-pc'], ['lab', 'lab-01'], ['till', 'till-02'], ['archive', 'archive-pc']] as const) {
      devices[name] = await apiCall<Enrolled>(service, 'POST', '/agents/enroll', {
        enrollmentKey: key, hostname, osType: 'windows', osVersion: '10.0.19045', architecture: 'x86_64', agentVersion: '1.0.0',
      });
    }
    // Seen a moment ago: online per the server (no socket, so live queries still find no agent).
    assert.equal(await heartbeat(service, devices.reception), 200);
    assert.equal(await heartbeat(service, devices.archive), 200);

    browser = await launchBrowser();
    context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'device-actions');
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill(TECH.email);
    await page.getByLabel('Password').fill(TECH.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Later' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('moves a device to another site, where the site page lists it', async () => {
    await page.goto(`/devices/${devices.lab.deviceId}`);
    await page.getByRole('heading', { name: /^lab-01/, level: 1 }).waitFor();
    const actions = page.getByRole('region', { name: 'Actions' });
    const select = actions.getByLabel('Move to another site');
    await select.locator('option', { hasText: 'Branch office' }).waitFor({ state: 'attached' });
    assert.equal(await select.locator('option', { hasText: 'Main office' }).count(), 0, 'the current site is not offered');
    await shot('device-page-actions');
    await select.selectOption({ label: 'Branch office' });
    await actions.getByRole('button', { name: 'Move device' }).click();
    await page.getByRole('status').filter({ hasText: 'lab-01 moved to the site Branch office.' }).waitFor();
    await page.locator('.props').getByRole('link', { name: 'Branch office' }).waitFor();

    await page.goto(`/sites/${ids.branch}`);
    const table = page.getByRole('table', { name: 'Devices at this site' });
    await table.getByRole('link', { name: 'lab-01' }).waitFor();
    assert.equal(await table.getByRole('link', { name: 'reception-pc' }).count(), 0, 'only the devices of this site');
    await shot('site-devices');
    await page.goto(`/sites/${ids.main}`);
    await page.getByRole('table', { name: 'Devices at this site' }).getByRole('link', { name: 'reception-pc' }).waitFor();
    assert.equal(await page.getByRole('table', { name: 'Devices at this site' }).getByRole('link', { name: 'lab-01' }).count(), 0, 'gone from its old site');
  });

  it('links the device to its site and the site to its organization', async () => {
    await page.goto(`/sites/${ids.branch}`);
    await page.getByRole('table', { name: 'Devices at this site' }).getByRole('link', { name: 'lab-01' }).click();
    await page.getByRole('heading', { name: /^lab-01/, level: 1 }).waitFor();
    await page.locator('.props').getByRole('link', { name: 'Branch office' }).click();
    await page.getByRole('heading', { name: 'Branch office', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Site details' }).getByRole('link', { name: 'Contoso Dental' }).click();
    await page.getByRole('heading', { name: 'Contoso Dental', level: 1 }).waitFor();
    // And straight from the device to its organization.
    await page.goto(`/devices/${devices.lab.deviceId}`);
    await page.locator('.props').getByRole('link', { name: 'Contoso Dental' }).click();
    await page.getByRole('heading', { name: 'Contoso Dental', level: 1 }).waitFor();
  });

  it('decommissions a device only after the dialog is confirmed', async () => {
    await page.goto(`/devices/${devices.till.deviceId}`);
    await page.getByRole('heading', { name: /^till-02/, level: 1 }).waitFor();
    const opener = page.getByRole('button', { name: 'Decommission till-02' });
    const dialog = page.getByRole('dialog', { name: 'Decommission till-02' });

    await opener.click();
    await dialog.waitFor();
    const question = (await dialog.textContent()) ?? '';
    assert.match(question, /token stops working/);
    assert.match(question, /cannot be undone/);
    await shot('decommission-dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await opener.click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(page.url().endsWith(`/devices/${devices.till.deviceId}`), true, 'still on the device');
    assert.equal(await heartbeat(service, devices.till), 200, 'Escape and Cancel kept the device');

    await opener.click();
    await dialog.getByRole('button', { name: 'Decommission device' }).click();
    await page.waitForURL((url) => url.pathname === '/devices');
    await page.getByRole('status').filter({ hasText: 'till-02 decommissioned' }).waitFor();
    await page.getByRole('link', { name: 'reception-pc' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'till-02' }).count(), 0, 'the list no longer has it');
    await shot('decommissioned');
    assert.equal(await heartbeat(service, devices.till), 401, 'its token stopped working');
  });

  it('searches the devices by hostname, with the search and the page size in the address', async () => {
    await page.goto('/devices');
    await page.getByRole('link', { name: 'archive-pc' }).waitFor();
    await page.getByLabel('Search hostname').fill('PC');
    await page.waitForURL((url) => url.searchParams.get('search') === 'PC');
    await page.getByRole('link', { name: 'lab-01' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'reception-pc' }).waitFor();
    await page.getByRole('link', { name: 'archive-pc' }).waitFor();
    await page.getByLabel('Search hostname').fill('recep');
    await page.getByRole('link', { name: 'archive-pc' }).waitFor({ state: 'detached' });
    assert.equal(new URL(page.url()).searchParams.get('search'), 'recep');
    await shot('devices-search');

    await page.getByLabel('Per page').selectOption('100');
    await page.waitForURL((url) => url.searchParams.get('limit') === '100');
    await page.getByLabel('Per page').selectOption('50');
    await page.waitForURL((url) => url.searchParams.get('limit') === '50');
    assert.equal(new URL(page.url()).searchParams.get('search'), 'recep', 'the search stays');
    await page.reload();
    assert.equal(await page.getByLabel('Search hostname').inputValue(), 'recep', 'a reload keeps the search');
    assert.equal(await page.getByLabel('Per page').inputValue(), '50');

    await page.getByLabel('Search hostname').fill('');
    await page.waitForURL((url) => !url.searchParams.has('search'));
    await page.getByRole('link', { name: 'lab-01' }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('limit'), '50');
  });

  it('searches the sites and the organizations by name', async () => {
    await page.goto('/sites');
    const sites = page.getByRole('table', { name: 'Sites' });
    await sites.getByRole('link', { name: 'Lab floor' }).waitFor();
    await page.getByLabel('Search name').fill('office');
    await page.waitForURL((url) => url.searchParams.get('search') === 'office');
    await sites.getByRole('link', { name: 'Lab floor' }).waitFor({ state: 'detached' });
    await sites.getByRole('link', { name: 'Main office' }).waitFor();
    await sites.getByRole('link', { name: 'Branch office' }).waitFor();
    await page.getByLabel('Per page').selectOption('25');
    await page.waitForURL((url) => url.searchParams.get('limit') === '25');
    await page.getByLabel('Search name').fill('');
    await page.waitForURL((url) => !url.searchParams.has('search'));
    await sites.getByRole('link', { name: 'Lab floor' }).waitFor();

    await page.goto('/organizations');
    const orgs = page.getByRole('table', { name: 'Organizations' });
    await orgs.getByRole('link', { name: 'Contoso Dental' }).waitFor();
    await page.getByLabel('Search name').fill('fabri');
    await page.waitForURL((url) => url.searchParams.get('search') === 'fabri');
    await orgs.getByRole('link', { name: 'Contoso Dental' }).waitFor({ state: 'detached' });
    await orgs.getByRole('link', { name: 'Fabrikam Labs' }).waitFor();
    await page.getByLabel('Search name').fill('');
    await page.waitForURL((url) => !url.searchParams.has('search'));
    await orgs.getByRole('link', { name: 'Contoso Dental' }).waitFor();
  });

  it('says an offline device is offline, since when, on the header and the live tab alike', async () => {
    // The server counts a device offline 180 s after its last heartbeat; rather than wait, its answer
    // is aged by ten minutes, as the server would give it then.
    const lastSeenAt = new Date(Date.now() - 10 * 60_000).toISOString();
    await page.route(`**/api/v1/devices/${devices.archive.deviceId}`, async (route) => {
      const response = await route.fetch();
      const body = { ...(await response.json()), status: 'offline', lastSeenAt };
      await route.fulfill({ response, json: body });
    });
    await page.goto(`/devices/${devices.archive.deviceId}`);
    const heading = page.getByRole('heading', { name: /^archive-pc/, level: 1 });
    await heading.getByText(/offline since/).waitFor();
    const main = page.locator('main');
    assert.doesNotMatch((await main.textContent()) ?? '', /\bonline\b/i, 'nothing on the overview says online');
    await page.getByRole('link', { name: 'Live event logs' }).click();
    await page.getByText('The device is offline.').waitFor();
    await page.getByText(/It has been offline since/).waitFor();
    assert.match((await heading.textContent()) ?? '', /offline since/);
    assert.doesNotMatch((await main.textContent()) ?? '', /\bonline\b/i, 'nothing on the live tab says online');
    await shot('device-offline');
    await page.unroute(`**/api/v1/devices/${devices.archive.deviceId}`);
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
});
