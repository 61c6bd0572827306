// The audit log's one search-and-filter form in headless Chromium at 1280x900: the address is the
// source of truth (a cleared box leaves it, back restores the form), one submission carries the
// search text and the filters, Enter submits, "Clear filters" empties the address, and the first
// entries show without scrolling. Tenants are seeded through the API; their changes are the entries.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN, SCREENSHOTS, apiCall, cannotRun, launchBrowser, screenshots, startService, type Service } from './harness.js';

const skip = cannotRun();
if (skip && process.env.CI) throw new Error(`the console's browser tests must run in CI: ${skip}`);

const VIEWPORT = { width: 1280, height: 900 };

/** The address's query as a plain object (what the page keeps in the URL). */
function params(page: Page): Record<string, string> {
  return Object.fromEntries(new URL(page.url()).searchParams);
}

describe('audit log: one form for search and filters, in a real browser', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let page: Page;
  let shot: (name: string) => Promise<void>;
  const pageErrors: string[] = [];
  const form = () => page.getByRole('search', { name: 'Search and filter the audit log' });
  const rows = () => page.locator('table.audit-table tbody tr');
  const actions = async () => (await page.locator('table.audit-table tbody tr td:nth-child(3) code').allTextContents()).map((s) => s.trim());
  /** Waits until the table's actions pass `check` (a load may still be in flight after the address changes). */
  const entriesWhere = async (check: (actions: string[]) => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const shown = await page.locator('table.audit-table:not([aria-busy])').count() ? await actions() : [];
      if (check(shown)) return shown;
      if (Date.now() > deadline) assert.fail(`${what}; the table shows: ${shown.join(', ') || 'nothing'}`);
      await page.waitForTimeout(100);
    }
  };
  const only = (...expected: string[]) => (shown: string[]) => shown.length > 0 && shown.every((a) => expected.includes(a));
  const includes = (...expected: string[]) => (shown: string[]) => expected.every((a) => shown.includes(a));

  before(async () => {
    service = await startService();
    const { accessToken: token } = await apiCall<{ accessToken: string }>(service, 'POST', '/auth/login', ADMIN);
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Northwind MSP', slug: 'northwind-msp' }, token);
    const contoso = await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Contoso Dental', slug: 'contoso-dental' }, token);
    await apiCall(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Tailspin Toys', slug: 'tailspin' }, token);
    for (const name of ['Main office', 'Branch office', 'Warehouse', 'Laboratory', 'Reception']) {
      await apiCall(service, 'POST', '/orgs/sites', { orgId: contoso.id, name }, token);
    }

    browser = await launchBrowser();
    const context = await browser.newContext({ baseURL: service.url, viewport: VIEWPORT });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'audit-form');
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Later' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('shows the first entries at 1280x900 without scrolling past the form and the chain status', async () => {
    await page.goto('/audit');
    const first = rows().first();
    await first.waitFor();
    const box = await first.boundingBox();
    assert.ok(box, 'the first row has a box');
    assert.ok(box.y >= 0 && box.y + box.height <= VIEWPORT.height, `the first row ends at y=${box.y + box.height}, below the 900 px fold`);
    assert.equal(await page.evaluate('window.scrollY'), 0, 'not scrolled');

    // Choosing an organization applies at once; the chain status stays one line until expanded.
    await page.getByLabel('Organization').selectOption({ label: 'Contoso Dental' });
    await page.waitForURL((url) => url.searchParams.has('orgId'));
    await page.locator('.chain-verdict').getByText('Valid').waitFor();
    const details = page.getByRole('button', { name: 'Chain details' });
    assert.equal(await details.getAttribute('aria-expanded'), 'false');
    const again = (await rows().first().boundingBox())!;
    assert.ok(again.y + again.height <= VIEWPORT.height, 'still above the fold with an organization chosen');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'audit-form-viewport.png') });
    await details.click();
    await page.getByText('Rows checked', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Hide chain details' }).click();
    await page.getByText('Rows checked', { exact: true }).waitFor({ state: 'hidden' });
  });

  it('names every control by what it filters', async () => {
    const names = await form().locator('input, select').evaluateAll((controls) =>
      controls.map((c) => [...((c as unknown as { labels: Iterable<{ textContent: string | null }> | null }).labels ?? [])].map((l) => l.textContent?.trim()).join(' ')));
    assert.deepEqual(names, [
      'Search text in actions, actor e-mails, resources and details',
      'Action contains',
      'User e-mail or name contains',
      'Organization',
      'Resource type or name contains',
      'From date and time (entries at or after)',
      'To date and time (entries at or before)',
    ]);
    assert.equal(await form().getByRole('button').count(), 2, 'one submit button and Clear filters');
  });

  it('drops a cleared Action box from the address, and the entries come back', async () => {
    await page.goto('/audit');
    await entriesWhere(includes('organization.create'), 'the whole log first');
    await form().getByLabel('Action contains').fill('site.create');
    await form().getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('action') === 'site.create');
    await entriesWhere(only('site.create'), 'only site.create entries');

    await form().getByLabel('Action contains').fill('');
    await form().getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL((url) => !url.search.includes('action'));
    assert.equal(new URL(page.url()).search, '', 'no empty or stale parameter stays');
    await entriesWhere(includes('organization.create', 'site.create'), 'every entry is back');
    await page.getByText('No entries match').waitFor({ state: 'detached' });
  });

  it('sends the search text and a filter in one submission', async () => {
    await form().getByLabel('Search text').fill('Branch');
    await form().getByLabel('Action contains').fill('site.');
    await form().getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.has('q') && url.searchParams.has('action'));
    assert.deepEqual(params(page), { q: 'Branch', action: 'site.' });
    await page.getByRole('heading', { name: 'Search results for “Branch”' }).waitFor();
    assert.deepEqual(await entriesWhere(only('site.create'), 'the one matching site'), ['site.create']);
    await rows().first().getByText('Branch office').waitFor();
    await shot('search-and-filter');
  });

  it('submits with Enter in any box', async () => {
    await form().getByLabel('Search text').fill('');
    await form().getByLabel('User e-mail or name contains').fill(ADMIN.email);
    await form().getByLabel('User e-mail or name contains').press('Enter');
    await page.waitForURL((url) => url.searchParams.has('user'));
    assert.deepEqual(params(page), { action: 'site.', user: ADMIN.email });
    await entriesWhere((shown) => shown.length === 5 && only('site.create')(shown), 'the five sites the admin created');
  });

  it('restores the previous filter values in the form on back, and the next ones on forward', async () => {
    await page.goBack();
    await page.waitForURL((url) => url.searchParams.has('q'));
    assert.equal(await form().getByLabel('Search text').inputValue(), 'Branch');
    assert.equal(await form().getByLabel('Action contains').inputValue(), 'site.');
    assert.equal(await form().getByLabel('User e-mail or name contains').inputValue(), '');
    await entriesWhere((shown) => shown.length === 1 && shown[0] === 'site.create', 'the one matching site again');

    await page.goForward();
    await page.waitForURL((url) => url.searchParams.has('user'));
    assert.equal(await form().getByLabel('Search text').inputValue(), '');
    assert.equal(await form().getByLabel('User e-mail or name contains').inputValue(), ADMIN.email);
  });

  it('empties the form and the address with Clear filters', async () => {
    await form().getByLabel('Resource type or name contains').fill('unsubmitted');
    await form().getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL((url) => url.search === '');
    for (const label of ['Search text', 'Action contains', 'User e-mail or name contains', 'Resource type or name contains']) {
      assert.equal(await form().getByLabel(label).inputValue(), '', `${label} is empty`);
    }
    assert.equal(await page.getByLabel('Organization').inputValue(), '');
    await entriesWhere(includes('organization.create', 'site.create'), 'every entry after Clear filters');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  it('refuses a “From” later than “To” in place, and keeps the address', async () => {
    await form().getByLabel('From date and time').fill('2030-01-02T00:00:00');
    await form().getByLabel('To date and time').fill('2030-01-01T00:00:00');
    await form().getByLabel('To date and time').press('Enter');
    await form().getByRole('alert').filter({ hasText: 'must not be later' }).waitFor();
    assert.equal(new URL(page.url()).search, '');
  });
});
