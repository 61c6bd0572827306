// The console's unhappy paths in headless Chromium: a role that may only read sees no write
// controls; an offline device, a lost connection, a 429 and an expired session each read as what
// they are, in place. Tenants and a device are seeded through the API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN, apiCall, cannotRun, launchBrowser, screenshots, startService, type Service, goToSection, adminWithMfa, trackApi } from './harness.js';

const skip = cannotRun();
const READONLY = { email: 'reader@contoso.test', password: 'a readonly password 123' };

async function signIn(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('web console: roles and failures in a real browser', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let deviceId: string;

  before(async () => {
    service = await startService();
    browser = await launchBrowser();
    const token = await adminWithMfa(service);
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Fabrikam IT', slug: 'fabrikam-it' }, token);
    const org = await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Tailspin Toys', slug: 'tailspin' }, token);
    const site = await apiCall<{ id: string }>(service, 'POST', '/orgs/sites', { orgId: org.id, name: 'Warehouse' }, token);
    await apiCall(service, 'POST', '/users', { ...READONLY, name: 'Rita Reader', scope: 'organization', orgId: org.id, role: 'readonly' }, token);
    const { key } = await apiCall<{ key: string }>(service, 'POST', '/enrollment-keys', { orgId: org.id, siteId: site.id, name: 'one device' }, token);
    // Enrolled, but no agent keeps a socket open: live queries find it offline.
    ({ deviceId } = await apiCall<{ deviceId: string }>(service, 'POST', '/agents/enroll', {
      enrollmentKey: key, hostname: 'till-01', osType: 'windows', osVersion: '10.0.19045', architecture: 'x86_64', agentVersion: '1.0.0',
    }));
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('shows a readonly organization user no control it cannot use', async () => {
    const context = await browser.newContext({ baseURL: service.url });
    const page = await context.newPage();
    const shot = screenshots(page, 'readonly');
    await signIn(page, READONLY);
    await page.getByRole('link', { name: 'Later' }).click();
    const nav = page.getByRole('navigation', { name: 'Sections' });
    await nav.getByRole('link', { name: 'Devices' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Partners' }).count(), 0, 'no partners section');

    await nav.getByRole('link', { name: 'Organizations' }).click();
    await page.getByRole('link', { name: 'Tailspin Toys' }).first().click();
    await page.getByRole('heading', { name: 'Tailspin Toys', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'Warehouse', exact: true }).waitFor();
    for (const name of ['Edit organization', 'Delete organization', 'New site', 'Edit Warehouse', 'Delete Warehouse']) {
      assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no "${name}" button`);
    }
    await nav.getByRole('link', { name: 'API keys' }).click();
    const newKey = page.getByRole('button', { name: 'New API key' });
    assert.ok((await newKey.count()) === 0 || (await newKey.isDisabled()), 'no usable "New API key"');
    await shot('api-keys');
    await nav.getByRole('link', { name: 'Audit log' }).click();
    await page.locator('.chain-verdict').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Export CSV' }).count(), 0, 'no export without audit:export');
    await context.close();
  });

  it('says a device is offline, and a lost connection is a lost connection', async () => {
    const context = await browser.newContext({ baseURL: service.url });
    const page = await context.newPage();
    const shot = screenshots(page, 'failures');
    await signIn(page, READONLY);
    await page.getByRole('link', { name: 'Later' }).click();
    await page.goto(`/devices/${deviceId}/live`);
    await page.getByText('The device is offline').first().waitFor();
    await shot('device-offline');

    await page.goto('/devices');
    await page.getByRole('link', { name: 'till-01' }).waitFor();
    await context.setOffline(true);
    await page.getByLabel('Status').selectOption('online');
    await page.getByText('Connection lost').first().waitFor();
    await shot('connection-lost');
    await context.setOffline(false);
    await page.getByRole('button', { name: 'Try again' }).first().click();
    // The retried request answers, so the message goes (checked once the retry has settled).
    await page.getByText('Connection lost').first().waitFor({ state: 'detached' });
    assert.equal(await page.getByText('Connection lost').count(), 0);
    await context.close();
  });

  it('explains a 429 from the sign-in throttle', async () => {
    const context = await browser.newContext({ baseURL: service.url });
    const page = await context.newPage();
    const shot = screenshots(page, 'throttled');
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill('someone@fabrikam.test');
    for (let attempt = 1; attempt <= 11; attempt++) {
      await page.getByLabel('Password').fill(`wrong password ${attempt}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor({ state: 'visible' });
      await page.waitForFunction('!document.querySelector("button[type=submit]")?.hasAttribute("disabled")');
    }
    await page.getByText('Too many requests.').waitFor();
    await shot('sign-in-429');
    await context.close();
  });

  it('returns an expired session to sign-in with a message, never a blank page', async () => {
    const context = await browser.newContext({ baseURL: service.url });
    const page = await context.newPage();
    const api = trackApi(page);
    await signIn(page, READONLY);
    await page.getByRole('link', { name: 'Later' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    // The overview's own requests finish first: one still in flight when the session ends would meet
    // the expiry on the overview, before the click this test is about (the nav link then vanishes).
    await api.idle();
    // The session ends on the server (its refresh family revoked) and the access token is refused once.
    const refreshToken = await page.evaluate('sessionStorage.getItem("dms.refreshToken")') as string;
    await apiCall(service, 'POST', '/auth/logout', { refreshToken });
    await page.route('**/api/v1/devices**', (route) => route.fulfill({ status: 401, contentType: 'application/problem+json', body: JSON.stringify({ status: 401, code: 'UNAUTHENTICATED', detail: 'Token expired' }) }), { times: 1 });
    await goToSection(page, 'Devices');
    await page.getByText('Your session has expired. Sign in again to continue.').waitFor();
    await page.getByLabel('E-mail').fill(READONLY.email);
    await page.getByLabel('Password').fill(READONLY.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    await context.close();
  });
});
