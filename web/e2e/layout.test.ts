// The console on a phone (390x844) and a desktop (1280x900), driven by keyboard where it matters:
// the menu collapses behind a button on narrow screens, no page scrolls sideways (tables scroll in
// their own box), sign-in with MFA by keyboard alone, the focus on the new page's heading after a
// page change, confirmations that open on Cancel, reorder buttons named after their organization,
// and Back after sign-out showing no signed-in content. Screenshots under test-results/console/.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { ADMIN, CHROMIUM, SCREENSHOTS, apiCall, cannotRun, screenshots, startService, type Service } from './harness.js';

// The callbacks given to page.evaluate and waitForFunction run in the page; the root tsconfig has
// no DOM library, so the little of it they use is declared here.
interface PageElement { tagName: string; textContent: string | null; getAttribute(name: string): string | null }
declare const document: { activeElement: PageElement | null; documentElement: { scrollWidth: number } };
declare const window: { innerWidth: number };

const skip = cannotRun();
if (skip && process.env.CI) throw new Error(`the console's browser tests must run in CI: ${skip}`);

interface Tokens { accessToken: string; refreshToken: string }

const PAULA = { email: 'paula@layout-e2e.test', password: 'a partner admin password' };
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
/** A name long enough to make a table cell wide. */
const LONG_SITE = 'Regional distribution warehouse and loading docks, building 7';

describe('web console layout, keyboard and focus in a real browser', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shot: (name: string) => Promise<void>;
  let paulaTotp: TOTP;
  const pageErrors: string[] = [];

  const nav = () => page.getByRole('navigation', { name: 'Sections' });
  const menuButton = () => page.getByRole('button', { name: 'Menu' });
  const activeElement = () => page.evaluate(() => {
    const el = document.activeElement;
    return { tag: el?.tagName.toLowerCase() ?? '', text: (el?.textContent ?? '').trim(), label: el?.getAttribute('aria-label') ?? '' };
  });
  const sidewaysOverflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  /** Opens the collapsed menu (phone) and chooses a section. */
  async function choose(section: string) {
    if (await menuButton().isVisible()) {
      await menuButton().click();
      await nav().waitFor();
    }
    await nav().getByRole('link', { name: section, exact: true }).click();
  }

  before(async () => {
    service = await startService();
    // Seeding through the API: a partner with two organizations and their sites, and its admin with MFA.
    const first = await apiCall<Tokens>(service, 'POST', '/auth/login', ADMIN);
    const adminSecret = (await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, first.accessToken)).secret;
    const adminTotp = new TOTP({ secret: adminSecret });
    await apiCall(service, 'POST', '/auth/mfa/enable', { code: adminTotp.generate() }, first.accessToken);
    await apiCall(service, 'POST', '/auth/logout', { refreshToken: first.refreshToken });
    const { mfaToken } = await apiCall<{ mfaToken: string }>(service, 'POST', '/auth/login', ADMIN);
    const admin = await apiCall<Tokens>(service, 'POST', '/auth/mfa/verify', { mfaToken, code: adminTotp.generate({ timestamp: Date.now() + 30_000 }) });
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Litware MSP', slug: 'litware' }, admin.accessToken);
    const contoso = await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Contoso Clinics', slug: 'contoso-clinics' }, admin.accessToken);
    await apiCall(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Fabrikam Foods', slug: 'fabrikam-foods' }, admin.accessToken);
    await apiCall(service, 'POST', '/orgs/sites', { orgId: contoso.id, name: LONG_SITE }, admin.accessToken);
    await apiCall(service, 'POST', '/orgs/sites', { orgId: contoso.id, name: 'Front desk' }, admin.accessToken);
    await apiCall(service, 'POST', '/users', { ...PAULA, name: 'Paula Partner', scope: 'partner', partnerId: partner.id, role: 'admin', orgAccess: 'all' }, admin.accessToken);
    await apiCall(service, 'POST', '/auth/logout', { refreshToken: admin.refreshToken });
    const paula = await apiCall<Tokens>(service, 'POST', '/auth/login', PAULA);
    const { secret } = await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, paula.accessToken);
    paulaTotp = new TOTP({ secret });
    await apiCall(service, 'POST', '/auth/mfa/enable', { code: paulaTotp.generate() }, paula.accessToken);
    await apiCall(service, 'POST', '/auth/logout', { refreshToken: paula.refreshToken });

    // As harness.launchBrowser, but with the back-forward cache that playwright turns off by default:
    // the sign-out test needs the browser's real Back behaviour.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      ignoreDefaultArgs: ['--disable-back-forward-cache'],
    });
    context = await browser.newContext({ baseURL: service.url, viewport: PHONE });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'layout');
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('signs in with MFA by keyboard alone: each step focuses its field, the code is typed at once', async () => {
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').waitFor();
    await page.keyboard.type(PAULA.email);
    await page.keyboard.press('Enter');
    await page.getByLabel('Password').waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('type') === 'password');
    await page.keyboard.type(PAULA.password);
    await page.keyboard.press('Enter');
    await page.getByLabel('Authentication code').waitFor();
    assert.equal((await activeElement()).tag, 'input');
    assert.equal(await page.getByLabel('Authentication code').evaluate((el) => el === document.activeElement), true, 'the code field has the focus');
    // No click: the digits go to the code field.
    await page.keyboard.type(paulaTotp.generate({ timestamp: Date.now() + 30_000 }));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  });

  it('collapses the menu on a phone: a button opens it, Escape and choosing a page close it', async () => {
    assert.equal(await nav().isVisible(), false, 'the navigation is hidden');
    await menuButton().waitFor();
    assert.equal(await menuButton().getAttribute('aria-expanded'), 'false');
    const controls = await menuButton().getAttribute('aria-controls');
    assert.ok(controls && (await page.locator(`[id="${controls}"]`).count()) === 1, 'aria-controls names the menu');
    const headerHeight = await page.locator('header.top').evaluate((el) => el.getBoundingClientRect().height);
    assert.ok(headerHeight < 80, `the collapsed header is ${headerHeight}px high`);

    await menuButton().click();
    await nav().waitFor();
    assert.equal(await menuButton().getAttribute('aria-expanded'), 'true');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'layout-phone-menu.png') });
    await shot('phone-menu-open');

    await page.keyboard.press('Escape');
    await nav().waitFor({ state: 'hidden' });
    assert.equal(await menuButton().getAttribute('aria-expanded'), 'false');
    assert.equal(await menuButton().evaluate((el) => el === document.activeElement), true, 'Escape returns the focus to the button');

    await choose('Sites');
    await page.getByRole('heading', { name: 'Sites', level: 1 }).waitFor();
    await nav().waitFor({ state: 'hidden' });
    assert.equal(await menuButton().getAttribute('aria-expanded'), 'false', 'choosing a page closes the menu');
  });

  it('moves the focus to the new page’s heading after each page change, and no page scrolls sideways', async () => {
    const sections: [string, RegExp][] = [
      ['Overview', /^Welcome/],
      ['Partner', /^Litware MSP$/],
      ['Organizations', /^Organizations$/],
      ['Sites', /^Sites$/],
      ['Devices', /^Devices$/],
      ['API keys', /API keys/i],
      ['Enrollment keys', /Enrollment keys/i],
      ['Destinations', /^Event destinations$/],
      ['Users', /^Users/],
      ['Audit log', /^Audit log$/],
    ];
    for (const [section, heading] of sections) {
      await choose(section);
      const h1 = page.getByRole('heading', { level: 1, name: heading });
      await h1.waitFor();
      await page.waitForFunction(() => document.activeElement?.tagName === 'H1', undefined, { timeout: 5_000 })
        .catch(() => undefined);
      const active = await activeElement();
      assert.equal(active.tag, 'h1', `${section}: the focus is on the page's heading, not on ${active.tag} "${active.text}"`);
      assert.match(active.text, heading, section);
      await page.waitForLoadState('networkidle');
      assert.ok(await sidewaysOverflow() <= 0, `${section}: the page is ${await sidewaysOverflow()}px wider than the screen`);
      await shot(`phone-${section.toLowerCase().replace(/\W+/g, '-')}`);
    }
    // My account is in the menu too.
    await menuButton().click();
    await page.getByRole('link', { name: /^My account/ }).click();
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.waitForLoadState('networkidle');
    assert.ok(await sidewaysOverflow() <= 0, `My account: the page is ${await sidewaysOverflow()}px wider than the screen`);
    // The tables keep their semantics when they scroll in their own box.
    await choose('Sites');
    const table = page.getByRole('table', { name: 'Sites' });
    await table.getByRole('cell', { name: LONG_SITE, exact: true }).waitFor();
    assert.ok(await sidewaysOverflow() <= 0, 'Sites with a long name: no sideways scroll of the page');
  });

  it('opens a delete confirmation with Cancel focused, so Enter does not delete; Escape cancels too', async () => {
    const row = page.getByRole('row').filter({ hasText: 'Front desk' });
    const remove = row.getByRole('button', { name: 'Delete' });
    await remove.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const active = await activeElement();
    assert.equal(active.text, 'Cancel', `the dialog opens on Cancel, not on "${active.text}"`);
    await shot('phone-delete-confirmation');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await remove.evaluate((el) => el === document.activeElement), true, 'the focus is back on the Delete button');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.waitForTimeout(500);
    await page.getByRole('table', { name: 'Sites' }).getByRole('cell', { name: 'Front desk', exact: true }).waitFor();
  });

  it('names each reorder button after its organization', async () => {
    await choose('Organizations');
    await page.getByRole('button', { name: 'Change display order' }).click();
    const down = page.getByRole('button', { name: /Move down/ }).first();
    await down.waitFor();
    const names = await page.getByRole('listitem').filter({ has: page.getByRole('button', { name: /Move up/ }) }).evaluateAll((items) =>
      items.map((li) => [...li.querySelectorAll('button')].map((b) => b.getAttribute('aria-label') ?? b.textContent ?? '')));
    assert.deepEqual(names.flat().sort(), ['Move down: Contoso Clinics', 'Move down: Fabrikam Foods', 'Move up: Contoso Clinics', 'Move up: Fabrikam Foods']);
    await page.getByRole('button', { name: 'Move down: Contoso Clinics' }).waitFor();
    assert.ok(await sidewaysOverflow() <= 0, 'the display order fits the phone');
  });

  it('shows the menu as a bar on a desktop', async () => {
    await page.setViewportSize(DESKTOP);
    await nav().waitFor();
    assert.equal(await menuButton().isVisible(), false, 'no Menu button on a wide screen');
    await nav().getByRole('link', { name: 'Devices', exact: true }).click();
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1');
    await shot('desktop-menu');
    await page.setViewportSize(PHONE);
  });

  it('after sign-out, Back shows the sign-in page, not the signed-in page from the browser’s cache', async () => {
    // Two documents (full loads) in the history, so Back leaves the one that signed out.
    await page.goto('/devices');
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    await page.goto('/audit');
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    await menuButton().click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    await page.goBack();
    await page.getByLabel('E-mail').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Devices', level: 1 }).count(), 0, 'no signed-in page');
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0, 'no signed-in frame');
    await shot('back-after-sign-out');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
});
