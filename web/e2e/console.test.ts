// The console in headless Chromium against the service started on the embedded database: sign in
// with MFA enrolment, create an organization and a site, an API key seen exactly once, an
// enrollment key that the reference agent uses to come online, its live event log and one record,
// those actions in the audit log with the chain valid, and sign-out. One screenshot per step.
import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { ADMIN, cannotRun, launchBrowser, screenshots, startAgent, startService, type Agent, type Service, goToSection } from './harness.js';

const skip = cannotRun();
if (skip && process.env.CI) throw new Error(`the console's browser tests must run in CI: ${skip}`);

/** A TOTP code for the step after the current one: the current one may just have been spent. */
function nextCode(secret: string): string {
  return new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + 30_000 });
}

describe('web console in a real browser', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shot: (name: string) => Promise<void>;
  let agent = null as Agent | null;
  const pageErrors: string[] = [];
  let mfaSecret = '';

  before(async () => {
    service = await startService();
    browser = await launchBrowser();
    context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page);
  });

  after(async () => {
    await agent?.stop();
    await browser?.close();
    await service?.stop();
  });

  it('refuses a wrong password with a message in place', async () => {
    await page.goto('/');
    await page.waitForURL('**/sign-in');
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong e-mail address or password' }).waitFor();
    await shot('sign-in-wrong-password');
  });

  it('signs in and enrols a TOTP authenticator with a QR code and the secret shown', async () => {
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Set up multi-factor authentication' }).waitFor();
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    mfaSecret = (await page.getByTestId('mfa-secret').textContent())!.trim();
    assert.match(mfaSecret, /^[A-Z2-7]+=*$/);
    await shot('mfa-enrolment');

    await page.getByLabel('Code from the app').fill('000000');
    await page.getByRole('button', { name: 'Turn on MFA' }).click();
    await page.getByRole('alert').first().waitFor();
    await page.getByLabel('Code from the app').fill(new TOTP({ secret: mfaSecret }).generate());
    await page.getByRole('button', { name: 'Turn on MFA' }).click();
    await page.getByText('MFA is on. Sign in again with a code from your app.').waitFor();
  });

  it('signs in again with the MFA step', async () => {
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Authentication code').fill('123456');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong or already used' }).waitFor();
    await page.getByLabel('Authentication code').fill(nextCode(mfaSecret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    await shot('signed-in');
  });

  it('creates a partner, an organization and a site', async () => {
    await goToSection(page, 'Partners');
    await page.getByRole('button', { name: 'New partner' }).click();
    const partnerForm = page.getByRole('form', { name: 'Create partner' });
    await partnerForm.getByLabel('Name', { exact: true }).fill('Northwind MSP');
    await partnerForm.getByLabel('Slug').fill('northwind-msp');
    await partnerForm.getByRole('button', { name: 'Create partner' }).click();
    await page.getByRole('heading', { name: 'Northwind MSP', level: 1 }).waitFor();

    await page.getByRole('button', { name: 'New organization' }).click();
    const orgForm = page.getByRole('form', { name: 'Create organization' });
    await orgForm.getByLabel('Name', { exact: true }).fill('Contoso Dental');
    await orgForm.getByLabel('Slug').fill('contoso-dental');
    await orgForm.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Contoso Dental', level: 1 }).waitFor();
    await shot('organization-created');

    await page.getByRole('button', { name: 'New site' }).click();
    const siteForm = page.getByRole('form', { name: 'Create site' });
    await siteForm.getByLabel('Name', { exact: true }).fill('Main office');
    await siteForm.getByLabel('Timezone').fill('Nowhere/Atlantis');
    await siteForm.getByRole('button', { name: 'Create site' }).click();
    await siteForm.getByRole('alert').first().waitFor();
    await siteForm.getByLabel('Timezone').fill('Europe/Zurich');
    await siteForm.getByRole('button', { name: 'Create site' }).click();
    await page.getByRole('table', { name: 'Sites' }).getByRole('cell', { name: 'Main office', exact: true }).waitFor();
    await shot('site-created');
  });

  it('creates an API key and shows it exactly once', async () => {
    await goToSection(page, 'API keys');
    await page.getByRole('button', { name: 'New API key' }).click();
    const form = page.getByRole('form', { name: 'New API key' });
    await form.getByLabel('Organization').selectOption({ label: 'Contoso Dental' });
    await form.getByLabel('Name', { exact: true }).fill('Backup job');
    await form.getByRole('checkbox', { name: /devices:read/ }).check();
    await form.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('revealed-secret').textContent())!.trim();
    assert.match(key, /^svc_[A-Za-z0-9_-]{32}$/);
    await shot('api-key-shown-once');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('cell', { name: 'Backup job' }).waitFor();
    assert.equal((await page.content()).includes(key), false, 'the key is gone from the page');
    await page.reload();
    await page.getByRole('cell', { name: 'Backup job' }).waitFor();
    assert.equal((await page.content()).includes(key), false, 'and never shown again');
    await shot('api-keys');
  });

  it('creates an enrollment key whose command brings the reference agent online', async () => {
    await goToSection(page, 'Enrollment keys');
    await page.getByRole('button', { name: 'New enrollment key' }).click();
    const form = page.getByRole('form', { name: 'New enrollment key' });
    await form.getByLabel('Organization').selectOption({ label: 'Contoso Dental' });
    await form.getByLabel('Site').selectOption({ label: 'Main office' });
    await form.getByLabel('Name', { exact: true }).fill('Office rollout');
    await form.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('revealed-secret').textContent())!.trim();
    const command = (await page.getByTestId('agent-command').textContent())!.trim();
    assert.equal(command, `npm run agent -- --server ${service.url} --enrollment-key ${key}`);
    await shot('enrollment-key-shown-once');
    await page.getByRole('button', { name: 'I have stored it' }).click();

    agent = startAgent(service.url, key);
    await goToSection(page, 'Devices');
    // The list refreshes itself every 10 s: no reload needed to watch the device come online.
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: os.hostname(), exact: true }) });
    await row.getByText('online', { exact: true }).waitFor({ timeout: 60_000 });
    await shot('device-online');
  });

  it('opens the live event log of the device and one record', async () => {
    await page.getByRole('link', { name: os.hostname() }).first().click();
    await page.getByRole('link', { name: 'Live event logs' }).click();
    await page.getByRole('link', { name: 'System', exact: true }).click();
    await page.getByRole('heading', { name: 'System', level: 2 }).or(page.getByRole('heading', { name: 'System', level: 1 })).first().waitFor();
    await page.getByRole('link', { name: /^Record \d+$/ }).first().waitFor();
    await shot('live-event-log');
    await page.getByRole('link', { name: /^Record \d+$/ }).first().click();
    await page.getByRole('heading', { name: /^Record \d+ of/ }).waitFor();
    await shot('live-event-record');
  });

  it('finds those actions in the audit log, with the chain shown valid', async () => {
    await goToSection(page, 'Audit log');
    await page.getByLabel('Organization').selectOption({ label: 'Contoso Dental' });
    const table = page.locator('table.audit-table');
    for (const action of ['api_key.create', 'device.eventlogs.query']) await table.getByText(action).first().waitFor();
    await page.locator('.chain-verdict').getByText('Valid').waitFor();
    await shot('audit-log');
  });

  it('keeps the session across a reload and shows a not-found page for unknown routes', async () => {
    await page.goto('/no/such/page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    assert.equal(await page.evaluate('window.localStorage.length'), 0, 'nothing is written to localStorage');
  });

  it('signs out, and a reload then asks to sign in', async () => {
    await page.goto('/');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    await shot('signed-out');
    await page.goto('/audit');
    await page.waitForURL('**/sign-in');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
});
