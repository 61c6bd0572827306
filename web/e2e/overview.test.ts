// The overview in headless Chromium: devices online and offline per organization (counts linking to
// the filtered device list), the latest failed audit entry (a wrong password), each organization's
// chain verified, failing event destinations shown only when one fails, and the audit parts absent
// for a user without audit:read. Tenants, devices, the failed sign-in and a destination pointing at
// a closed port are seeded through the API; a partner technician reads the overview.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { freePort } from '../../test/support/free-port.js';
import { ADMIN, SCREENSHOTS, apiCall, cannotRun, launchBrowser, screenshots, startService, type Service, adminWithMfa, heartbeat, type Enrolled } from './harness.js';

const skip = cannotRun();
if (skip && process.env.CI) throw new Error(`the console's browser tests must run in CI: ${skip}`);
const TECH = { email: 'tess@overview-e2e.test', password: 'a technician password 123' };
const READER = { email: 'rita@overview-e2e.test', password: 'a reader password 12345' };
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Later' }).click();
  await page.getByRole('heading', { name: /^Welcome/, level: 1 }).waitFor();
}

describe('web console: the overview', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shot: (name: string) => Promise<void>;
  const pageErrors: string[] = [];
  const ids = {} as { contoso: string; fabrikam: string; destination: string };

  before(async () => {
    service = await startService({ OUTBOUND_ALLOW_PRIVATE: 'true' });
    const token = await adminWithMfa(service);
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Northwind MSP', slug: 'northwind-msp' }, token);
    ids.contoso = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Contoso Dental', slug: 'contoso-dental' }, token)).id;
    ids.fabrikam = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Fabrikam Labs', slug: 'fabrikam-labs' }, token)).id;
    await apiCall(service, 'POST', '/users', { ...TECH, name: 'Tess Technician', scope: 'partner', partnerId: partner.id, role: 'technician', orgAccess: 'all' }, token);
    await apiCall(service, 'POST', '/users', { ...READER, name: 'Rita Reader', scope: 'organization', orgId: ids.contoso, role: 'readonly' }, token);

    // Contoso: three devices, one of them online; Fabrikam: two, both offline (never seen).
    const enroll = async (orgId: string, hostnames: string[]) => {
      const site = await apiCall<{ id: string }>(service, 'POST', '/orgs/sites', { orgId, name: 'Main office' }, token);
      const { key } = await apiCall<{ key: string }>(service, 'POST', '/enrollment-keys', { orgId, siteId: site.id, name: 'office', maxUsage: 10 }, token);
      const out: Enrolled[] = [];
      for (const hostname of hostnames) {
        out.push(await apiCall<Enrolled>(service, 'POST', '/agents/enroll', {
          enrollmentKey: key, hostname, osType: 'windows', osVersion: '10.0.19045', architecture: 'x86_64', agentVersion: '1.0.0',
        }));
      }
      return out;
    };
    const contoso = await enroll(ids.contoso, ['reception-pc', 'xray-room', 'front-desk']);
    await enroll(ids.fabrikam, ['lab-01', 'lab-02']);
    assert.equal(await heartbeat(service, contoso[0]!), 200);

    // A failed sign-in of Contoso's reader: a `failure` entry in Contoso's chain.
    const failed = await fetch(`${service.url}/api/v1/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: READER.email, password: 'not the password' }),
    });
    await failed.body?.cancel();
    assert.equal(failed.status, 401);

    // A webhook to a port nobody listens on: every delivery fails (the server calls it failing only
    // after 24 hours, which the test then plays by aging the list's answer).
    const closedPort = await freePort();
    ids.destination = (await apiCall<{ id: string }>(service, 'POST', '/event-destinations', {
      name: 'SIEM collector', kind: 'webhook', url: `http://127.0.0.1:${closedPort}/hook`, orgId: ids.contoso,
    }, token)).id;

    browser = await launchBrowser();
    context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'overview');
    await signIn(page, TECH);
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  const devicesTable = () => page.getByRole('table', { name: 'Devices per organization' });
  const chainTable = () => page.getByRole('table', { name: 'Chain status per organization' });

  it('counts the devices online and offline per organization, each count linking to the filtered list', async () => {
    await page.goto('/');
    await page.getByRole('heading', { name: /^Welcome/, level: 1 }).waitFor();
    assert.equal(await page.locator('main > h1:first-child').count(), 1, 'the heading comes first');
    const main = (await page.locator('main').textContent()) ?? '';
    assert.match(main, /Signed in as tess@overview-e2e\.test/);
    assert.doesNotMatch(main, /devices:read/, 'no raw permission list');

    const contoso = devicesTable().getByRole('row').filter({ hasText: 'Contoso Dental' });
    const fabrikam = devicesTable().getByRole('row').filter({ hasText: 'Fabrikam Labs' });
    await contoso.getByRole('link', { name: '1 online' }).waitFor();
    await contoso.getByRole('link', { name: '2 offline' }).waitFor();
    await fabrikam.getByRole('link', { name: '0 online' }).waitFor();
    await fabrikam.getByRole('link', { name: '2 offline' }).waitFor();
    assert.equal(await contoso.getByRole('link', { name: 'Contoso Dental' }).getAttribute('href'), `/organizations/${ids.contoso}`);

    await contoso.getByRole('link', { name: '1 online' }).click();
    await page.waitForURL((url) => url.pathname === '/devices' && url.searchParams.get('orgId') === ids.contoso && url.searchParams.get('status') === 'online');
    await page.getByRole('link', { name: 'reception-pc' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'xray-room' }).count(), 0, 'only the online device');
    await page.goBack();
    await fabrikam.getByRole('link', { name: '2 offline' }).click();
    await page.waitForURL((url) => url.searchParams.get('orgId') === ids.fabrikam && url.searchParams.get('status') === 'offline');
    await page.getByRole('link', { name: 'lab-02' }).waitFor();
  });

  it('shows the failed sign-in among the latest failed or denied entries, linking to the entry', async () => {
    await page.goto('/');
    const table = page.getByRole('table', { name: 'Failed or denied audit entries' });
    const row = table.getByRole('row').filter({ hasText: 'Sign-in failed' });
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    assert.match(text, /user\.login\.failed/);
    assert.match(text, /Rita Reader|rita@overview-e2e\.test/, 'the actor');
    assert.match(text, /failure/);
    assert.equal(await table.getByRole('row').filter({ hasText: /\bsuccess\b/ }).count(), 0, 'no successful entry');
    await row.getByRole('link').first().click();
    await page.waitForURL((url) => new RegExp(`^/audit/${UUID}$`).test(url.pathname));
    await page.getByRole('heading', { name: /user\.login\.failed/, level: 1 }).waitFor();
  });

  it('verifies each organization’s chain, linking to its audit log', async () => {
    await page.goto('/');
    for (const [name, id] of [['Contoso Dental', ids.contoso], ['Fabrikam Labs', ids.fabrikam]] as const) {
      const row = chainTable().getByRole('row').filter({ hasText: name });
      await row.locator('.chain-word-valid').waitFor();
      assert.doesNotMatch((await row.textContent()) ?? '', /Broken|not checked/);
      assert.equal(await row.getByRole('link', { name }).getAttribute('href'), `/audit?orgId=${id}`);
    }
    await page.getByRole('heading', { name: 'Latest failed or denied audit entries' }).waitFor();
    await page.getByRole('table', { name: 'Failed or denied audit entries' }).getByRole('row').filter({ hasText: 'Sign-in failed' }).waitFor();
    await shot('technician');
    // The README's picture: the window as a technician sees it, 1280x900.
    await page.screenshot({ path: path.join(SCREENSHOTS, 'overview.png') });
    await chainTable().getByRole('row').filter({ hasText: 'Contoso Dental' }).getByRole('link', { name: 'Contoso Dental' }).click();
    await page.waitForURL((url) => url.pathname === '/audit' && url.searchParams.get('orgId') === ids.contoso);
    await page.getByRole('heading', { name: /^Chain integrity/ }).waitFor();
  });

  it('shows an answer of the busy verifier as "not checked now", not as an error', async () => {
    await page.route('**/api/v1/audit-logs/verify?**', (route: Route) => route.fulfill({
      status: 429, headers: { 'retry-after': '5', 'content-type': 'application/problem+json' },
      body: JSON.stringify({ code: 'RATE_LIMITED', title: 'Too many requests', status: 429 }),
    }));
    await page.goto('/');
    await chainTable().getByRole('row').filter({ hasText: 'Contoso Dental' }).getByText('not checked now').waitFor();
    assert.equal(await page.getByRole('alert').count(), 0, 'no error banner');
    await page.unroute('**/api/v1/audit-logs/verify?**');
    await chainTable().getByRole('row').filter({ hasText: 'Contoso Dental' }).getByRole('button', { name: 'Check again' }).click();
    await chainTable().getByRole('row').filter({ hasText: 'Contoso Dental' }).locator('.chain-word-valid').waitFor();
  });

  it('lists failing event destinations, and nothing while none fails', async () => {
    const listed = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/event-destinations');
    await page.goto('/');
    assert.equal((await listed).status(), 200);
    await devicesTable().getByRole('link', { name: '1 online' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Failing event destinations' }).count(), 0, 'nothing while none fails');

    // The server marks a destination failing after 24 hours of failed deliveries; rather than wait,
    // the list's answer is aged as the server would give it then.
    await page.route('**/api/v1/event-destinations?**', async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { data: Record<string, unknown>[] };
      const data = body.data.map((d) => d['id'] === ids.destination
        ? { ...d, status: 'failing', lastError: 'connect ECONNREFUSED 127.0.0.1', lastFailureAt: new Date().toISOString() }
        : d);
      await route.fulfill({ response, json: { ...body, data } });
    });
    await page.reload();
    const section = page.getByRole('region', { name: 'Failing event destinations' });
    await section.getByRole('link', { name: 'SIEM collector' }).waitFor();
    assert.equal(await section.getByRole('link', { name: 'SIEM collector' }).getAttribute('href'), `/destinations/${ids.destination}`);
    assert.match((await section.textContent()) ?? '', /ECONNREFUSED/);
    await shot('failing-destination');
    await page.unroute('**/api/v1/event-destinations?**');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  it('fits a phone (390 px) without scrolling sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto('/');
      await devicesTable().getByRole('link', { name: '1 online' }).waitFor();
      await chainTable().getByRole('row').filter({ hasText: 'Contoso Dental' }).locator('.chain-word-valid').waitFor();
      await page.getByRole('table', { name: 'Failed or denied audit entries' }).getByRole('row').filter({ hasText: 'Sign-in failed' }).waitFor();
      assert.equal(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), true, 'no sideways scroll');
      await shot('phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('leaves out the audit parts for a user without audit:read', async () => {
    // Every role carries audit:read; the session's permissions are narrowed in the browser, as the
    // API would answer for a role without it.
    const reader = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 } });
    reader.setDefaultTimeout(15_000);
    const withoutAudit = async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as Record<string, unknown>;
      const strip = (user: unknown) => {
        const u = user as { permissions?: string[] } | undefined;
        return u?.permissions ? { ...u, permissions: u.permissions.filter((p) => p !== 'audit:read') } : u;
      };
      const json = 'user' in body ? { ...body, user: strip(body['user']) } : 'permissions' in body ? strip(body) : body;
      await route.fulfill({ response, json });
    };
    for (const route of ['login', 'refresh', 'me', 'mfa/verify']) await reader.route(`**/api/v1/auth/${route}`, withoutAudit);
    const readerPage = await reader.newPage();
    const auditCalls: string[] = [];
    readerPage.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/v1/audit-logs')) auditCalls.push(r.url());
    });
    try {
      await signIn(readerPage, READER);
      const table = readerPage.getByRole('table', { name: 'Devices per organization' });
      const contoso = table.getByRole('row').filter({ hasText: 'Contoso Dental' });
      await contoso.getByRole('link', { name: '1 online' }).waitFor();
      await contoso.getByRole('link', { name: '2 offline' }).waitFor();
      assert.equal(await table.getByRole('row').filter({ hasText: 'Fabrikam Labs' }).count(), 0, 'only the reader’s organization');
      assert.equal(await readerPage.getByRole('heading', { name: 'Latest failed or denied audit entries' }).count(), 0);
      assert.equal(await readerPage.getByRole('heading', { name: 'Audit chain status' }).count(), 0);
      assert.deepEqual(auditCalls, [], 'no audit request at all');
      await screenshots(readerPage, 'overview-reader')('without-audit');
    } finally {
      await reader.close();
    }
  });
});
