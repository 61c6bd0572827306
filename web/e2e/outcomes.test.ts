// What a technician sees after acting, in headless Chromium at 1280x700 as the system admin: a success
// notice lasts until the next action and no longer; a name past 255 characters is kept whole and
// refused with a message (never cut by the field); after a confirmed delete removes its row the focus
// is on the outcome; a system admin orders a partner's organizations from the partner's page; the
// devices table links each device's organization and site; and another page of a list starts at its
// top. Tenants and devices are seeded through the API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { ADMIN, apiCall, cannotRun, launchBrowser, screenshots, startService, type Enrolled, type Service, type Tokens } from './harness.js';

// page.evaluate callbacks run in the page; the root tsconfig has no DOM library.
interface PageElement { tagName: string; textContent: string | null; getBoundingClientRect(): { top: number } }
declare const document: { activeElement: PageElement | null; querySelector(selector: string): PageElement | null; documentElement: { scrollHeight: number } };
declare const window: { scrollY: number; innerHeight: number; scrollTo(x: number, y: number): void };

const skip = cannotRun();
if (skip && process.env.CI) throw new Error(`the console's browser tests must run in CI: ${skip}`);

const STEP = 30_000;
const DEVICES = 27;

describe('web console: outcomes of actions, long names, ordering, device links, paging', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let token: string;
  let shot: (name: string) => Promise<void>;
  const pageErrors: string[] = [];
  const ids = {} as { partner: string; contoso: string; fabrikam: string; tailspin: string; site: string; doomed: string };

  const active = () => page.evaluate(() => ({ tag: document.activeElement?.tagName ?? '', text: (document.activeElement?.textContent ?? '').trim() }));
  const statuses = () => page.locator('main .notice[role=status]').allTextContents();

  before(async () => {
    service = await startService();
    const first = await apiCall<Tokens>(service, 'POST', '/auth/login', ADMIN);
    const { secret } = await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, first.accessToken);
    const totp = new TOTP({ secret });
    await apiCall(service, 'POST', '/auth/mfa/enable', { code: totp.generate() }, first.accessToken);
    const { mfaToken } = await apiCall<{ mfaToken: string }>(service, 'POST', '/auth/login', ADMIN);
    const usedAt = Date.now() + STEP;
    token = (await apiCall<Tokens>(service, 'POST', '/auth/mfa/verify', { mfaToken, code: totp.generate({ timestamp: usedAt }) })).accessToken;

    ids.partner = (await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Northwind MSP', slug: 'northwind-msp' }, token)).id;
    const org = async (name: string, slug: string) => (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: ids.partner, name, slug }, token)).id;
    ids.contoso = await org('Contoso Dental', 'contoso-dental');
    ids.fabrikam = await org('Fabrikam Labs', 'fabrikam-labs');
    ids.tailspin = await org('Tailspin Toys', 'tailspin-toys');
    ids.site = (await apiCall<{ id: string }>(service, 'POST', '/orgs/sites', { orgId: ids.contoso, name: 'Main office' }, token)).id;
    ids.doomed = (await apiCall<{ id: string }>(service, 'POST', '/orgs/sites', { orgId: ids.contoso, name: 'Closed branch' }, token)).id;
    const { key } = await apiCall<{ key: string }>(service, 'POST', '/enrollment-keys', { orgId: ids.contoso, siteId: ids.site, name: 'office', maxUsage: 100 }, token);
    for (let i = 1; i <= DEVICES; i++) {
      await apiCall<Enrolled>(service, 'POST', '/agents/enroll', {
        enrollmentKey: key, hostname: `desk-${String(i).padStart(2, '0')}`, osType: 'windows', osVersion: '10.0.19045', architecture: 'x86_64', agentVersion: '1.0.0',
      });
    }

    browser = await launchBrowser();
    context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 700 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'outcomes');
    // Codes are single-use: the browser's is from the time step after the one the seeding used.
    while (Date.now() < usedAt) await new Promise((resolve) => setTimeout(resolve, 500));
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Authentication code').fill(totp.generate({ timestamp: Date.now() + STEP }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('keeps a success notice until the next action, and says only the latest outcome', async () => {
    await page.goto(`/partners/${ids.partner}`);
    await page.getByRole('heading', { name: 'Northwind MSP', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New organization' }).click();
    await page.getByLabel('Name').fill('Woodgrove Bank');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Woodgrove Bank', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Organization Woodgrove Bank created.' }).waitFor();
    assert.deepEqual(await statuses(), ['Organization Woodgrove Bank created.']);

    // Opening the editor is the next action.
    await page.getByRole('button', { name: 'Edit organization' }).click();
    assert.deepEqual(await statuses(), [], 'the creation notice went with the next action');
    await page.getByLabel('Name').fill('Woodgrove Bank Group');
    await page.getByRole('button', { name: 'Save organization' }).click();
    await page.getByRole('status').filter({ hasText: 'Organization Woodgrove Bank Group saved.' }).waitFor();
    assert.deepEqual(await statuses(), ['Organization Woodgrove Bank Group saved.'], 'one outcome, the latest');

    // An action elsewhere on the page clears it too: a site created below says its own outcome only.
    await page.getByRole('button', { name: 'New site' }).click();
    assert.deepEqual(await statuses(), []);
    await page.getByRole('form', { name: 'Create site' }).getByLabel('Name').fill('Head office');
    await page.getByRole('button', { name: 'Create site' }).click();
    await page.getByRole('status').filter({ hasText: 'Site Head office created.' }).waitFor();
    assert.deepEqual(await statuses(), ['Site Head office created.']);
    await shot('latest-outcome-only');
  });

  it('keeps a name past 255 characters whole and says it is too long, instead of cutting it', async () => {
    await page.goto(`/organizations/${ids.fabrikam}`);
    await page.getByRole('heading', { name: 'Fabrikam Labs', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Edit organization' }).click();
    const name = page.getByRole('form', { name: 'Edit organization' }).getByLabel('Name');
    const long = `Fabrikam ${'Laboratories '.repeat(25)}`.trim();
    assert.ok(long.length > 255);
    await name.fill(long);
    assert.equal((await name.inputValue()).length, long.length, 'the field keeps every character');
    await page.getByRole('button', { name: 'Save organization' }).click();
    await page.getByText(`The name can have at most 255 characters (now ${long.length}).`).waitFor();
    await shot('name-too-long');
    const saved = await apiCall<{ name: string }>(service, 'GET', `/orgs/organizations/${ids.fabrikam}`, undefined, token);
    assert.equal(saved.name, 'Fabrikam Labs', 'nothing was saved');
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('puts the focus on the outcome when a confirmed delete removed the row', async () => {
    await page.goto(`/organizations/${ids.contoso}`);
    const sites = page.getByRole('table', { name: 'Sites' });
    await sites.getByRole('cell', { name: 'Closed branch', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete Closed branch' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Closed branch' });
    await dialog.getByRole('button', { name: 'Delete site' }).click();
    await page.getByRole('status').filter({ hasText: 'Closed branch deleted' }).waitFor();
    await sites.getByRole('cell', { name: 'Closed branch', exact: true }).waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.activeElement?.tagName !== 'BODY', undefined, { timeout: 5_000 }).catch(() => undefined);
    const focused = await active();
    assert.notEqual(focused.tag, 'BODY', 'the focus is not lost to the top of the document');
    assert.equal(focused.text, 'Site Closed branch deleted.', 'the focus is on the outcome');
  });

  it('lets the system admin order a partner’s organizations from the partner’s page', async () => {
    await page.goto(`/partners/${ids.partner}`);
    await page.getByRole('heading', { name: 'Northwind MSP', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Change display order' }).click();
    const list = page.getByRole('list', { name: 'Organization display order' });
    await list.getByRole('link', { name: 'Tailspin Toys' }).waitFor();
    const shown = () => list.getByRole('listitem').locator('.order-name a').allTextContents();
    const before = await shown();
    assert.equal(before.length, 4);
    const [firstName] = before;
    await page.getByRole('button', { name: `Move down: ${firstName}` }).click();
    await page.getByText('Order saved.').waitFor();
    const after = await shown();
    assert.deepEqual(after, [before[1], before[0], ...before.slice(2)]);
    await shot('partner-display-order');
    const listed = await apiCall<{ data: { name: string }[] }>(service, 'GET', `/orgs/organizations?partnerId=${ids.partner}`, undefined, token);
    assert.deepEqual(listed.data.map((o) => o.name), after, 'the partner’s lists follow the new order');
  });

  it('links the organization and site of each device in the devices table', async () => {
    await page.goto('/devices');
    const table = page.locator('main table');
    const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'desk-27' }) });
    await row.waitFor();
    await row.getByRole('link', { name: 'Main office' }).click();
    await page.getByRole('heading', { name: 'Main office', level: 1 }).waitFor();
    await page.goBack();
    await row.getByRole('link', { name: 'Contoso Dental' }).click();
    await page.getByRole('heading', { name: 'Contoso Dental', level: 1 }).waitFor();
  });

  it('shows another page of a list from its top, not where the last one was scrolled to', async () => {
    // Newest enrolled first: desk-27 … desk-03 on the first page, desk-02 and desk-01 on the second.
    await page.goto('/devices?limit=25');
    const table = page.locator('main table');
    await table.getByRole('link', { name: 'desk-27' }).waitFor();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    assert.ok(await page.evaluate(() => window.scrollY) > 0, 'the first page was scrolled down');
    await page.getByRole('navigation', { name: 'Device pages' }).getByRole('button', { name: 'Next' }).click();
    await page.waitForURL((url) => url.searchParams.get('page') === '2');
    await table.getByRole('link', { name: /^desk-0[12]$/ }).first().waitFor();
    const top = await page.evaluate(() => document.querySelector('main table')!.getBoundingClientRect().top);
    const height = await page.evaluate(() => window.innerHeight);
    assert.ok(top >= 0 && top < height / 2, `the second page's table starts in view (top at ${top}px of ${height}px)`);
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
});
