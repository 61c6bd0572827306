// The Destinations page in headless Chromium at phone width (390 px), against the service with
// OUTBOUND_ALLOW_PRIVATE=true and a real webhook receiver on 127.0.0.1: an organization admin signs
// in with MFA, creates a webhook (its secret seen once), sends a test event the receiver gets signed,
// sees the receiver's 500 in the delivery log after an audited change, rotates, disables, deletes.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { ADMIN, apiCall, cannotRun, launchBrowser, screenshots, startService, type Service, goToSection } from './harness.js';

const skip = cannotRun();
const ORG_ADMIN = { email: 'ops@contoso.test', password: 'an org admin password 123' };

interface Tokens { accessToken: string }

/** Turns MFA on for a user through the API (spending this step's code); returns its TOTP. */
async function enableMfa(service: Service, user: { email: string; password: string }): Promise<TOTP> {
  const first = await apiCall<Tokens>(service, 'POST', '/auth/login', user);
  const { secret } = await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, first.accessToken);
  const totp = new TOTP({ secret });
  await apiCall(service, 'POST', '/auth/mfa/enable', { code: totp.generate() }, first.accessToken);
  return totp;
}

/** The next step's code: the current one has been spent. */
const nextCode = (totp: TOTP) => totp.generate({ timestamp: Date.now() + 30_000 });

/** A session of the bootstrap admin opened with a code (writes need one). */
async function adminSession(service: Service): Promise<string> {
  const totp = await enableMfa(service, ADMIN);
  const { mfaToken } = await apiCall<{ mfaToken: string }>(service, 'POST', '/auth/login', ADMIN);
  return (await apiCall<Tokens>(service, 'POST', '/auth/mfa/verify', { mfaToken, code: nextCode(totp) })).accessToken;
}

/** Standard Webhooks: v1 = base64 HMAC-SHA256 of "id.timestamp.body" under the secret after whsec_. */
function signature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

async function noSidewaysScroll(page: Page, where: string): Promise<void> {
  const [scroll, width] = await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]') as [number, number];
  assert.ok(scroll <= width, `${where}: the page scrolls sideways (${scroll} px wide in a ${width} px window)`);
}

describe('web console: event destinations in a real browser', { skip: skip ?? false }, () => {
  let service: Service;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let page: Page;
  let shot: (name: string) => Promise<void>;
  let totp: TOTP;
  let secret = '';
  const pageErrors: string[] = [];

  before(async () => {
    [service, receiver, browser] = await Promise.all([startService({ OUTBOUND_ALLOW_PRIVATE: 'true' }), startWebhookReceiver(), launchBrowser()]);
    const token = await adminSession(service);
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Litware MSP', slug: 'litware' }, token);
    const org = await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Contoso Clinics', slug: 'contoso-clinics' }, token);
    await apiCall(service, 'POST', '/users', { ...ORG_ADMIN, name: 'Olga Ops', scope: 'organization', orgId: org.id, role: 'admin' }, token);
    totp = await enableMfa(service, ORG_ADMIN);
    const context = await browser.newContext({ baseURL: service.url, viewport: { width: 390, height: 844 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'destinations');
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    await service?.stop();
  });

  it('signs in as an organization admin with an MFA code', async () => {
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill(ORG_ADMIN.email);
    await page.getByLabel('Password').fill(ORG_ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Authentication code').fill(nextCode(totp));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  });

  it('creates a webhook destination and shows its secret exactly once', async () => {
    await goToSection(page, 'Destinations');
    await page.getByText('No event destinations yet.').waitFor();
    await page.getByRole('button', { name: 'New destination' }).click();
    const form = page.getByRole('form', { name: 'New event destination' });
    assert.equal(await form.getByLabel('Covers').inputValue(), 'Contoso Clinics');
    await form.getByLabel('Name', { exact: true }).fill('SIEM relay');
    await form.getByLabel('Kind').selectOption('webhook');
    await form.getByLabel('URL').fill(receiver.url);
    await form.getByRole('checkbox', { name: 'Success' }).check();
    await form.getByRole('checkbox', { name: 'Failure' }).check();
    await noSidewaysScroll(page, 'create form');
    await shot('create-form');
    await form.getByRole('button', { name: 'Create destination' }).click();

    secret = (await page.getByTestId('revealed-secret').textContent())!.trim();
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
    await page.getByText('it is shown only once').waitFor();
    await shot('secret-shown-once');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('heading', { name: 'SIEM relay', level: 1 }).waitFor();
    await page.getByText('Destination “SIEM relay” created.').waitFor();
    assert.equal((await page.content()).includes(secret), false, 'the secret is gone from the page');
    await noSidewaysScroll(page, 'destination page');

    await page.getByRole('link', { name: '← Event destinations' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'SIEM relay' }) });
    await row.getByText('active', { exact: true }).waitFor();
    // The organization's name arrives with a lookup of its own, after the row.
    await row.getByText('Contoso Clinics').waitFor();
    assert.match(await row.textContent() ?? '', /webhook.*127\.0\.0\.1.*Contoso Clinics/);
    assert.equal((await page.content()).includes(secret), false, 'and never shown again');
    await noSidewaysScroll(page, 'destination list');
    await shot('list');
    await row.getByRole('link', { name: 'SIEM relay' }).click();
  });

  it('sends a test event that the receiver gets, signed, and says it was delivered', async () => {
    await page.getByRole('button', { name: 'Send test event to “SIEM relay”' }).click();
    const outcome = page.getByRole('status').filter({ hasText: /Test event delivered\..*HTTP 200/ });
    await outcome.waitFor();
    assert.ok(await outcome.evaluate((el) => el === el.ownerDocument.activeElement), 'the outcome takes the focus');
    const test = receiver.received.find((r) => r.json.type === 'destination.test');
    assert.ok(test, 'the receiver got the test event');
    const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signed } = test.headers;
    assert.equal(signed, signature(secret, String(id), String(timestamp), test.body));
    await shot('test-delivered');
  });

  it('shows a failing receiver’s answer in the delivery log after an audited change', async () => {
    receiver.answer(...Array<number>(100).fill(500));
    await page.getByRole('button', { name: 'Edit “SIEM relay”' }).click();
    const form = page.getByRole('form', { name: 'Edit “SIEM relay”' });
    await form.getByLabel('Name', { exact: true }).fill('SIEM relay EU');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved the changes to “SIEM relay EU”.').waitFor();

    // The change is audited, sealed and sent; the receiver refuses it, and the log (read every 5 s) says so.
    const log = page.getByRole('region', { name: 'Delivery log table' });
    await log.getByRole('row').filter({ hasText: 'failed' }).filter({ hasText: 'HTTP 500' }).first().waitFor({ timeout: 20_000 });
    await page.getByText(/Last error: HTTP 500/).first().waitFor({ timeout: 10_000 });
    await noSidewaysScroll(page, 'delivery log');
    await shot('delivery-failed');
    receiver.answer();
  });

  it('rotates the secret, disables and deletes, the delete asked with Cancel focused', async () => {
    await page.getByRole('button', { name: 'Rotate secret of “SIEM relay EU”' }).click();
    const rotateDialog = page.getByRole('dialog', { name: 'Rotate secret of “SIEM relay EU”' });
    await rotateDialog.getByText('keeps signing every delivery alongside the new one for 24 hours').waitFor();
    await rotateDialog.getByRole('button', { name: 'Rotate the secret' }).click();
    const rotated = (await page.getByTestId('revealed-secret').textContent())!.trim();
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, secret);
    await shot('secret-rotated');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByText('The signing secret of “SIEM relay EU” is rotated').waitFor();
    assert.equal((await page.content()).includes(rotated), false, 'the new secret is gone from the page');

    await page.getByRole('button', { name: 'Disable “SIEM relay EU”' }).click();
    await page.getByText('“SIEM relay EU” is disabled').waitFor();
    await page.getByRole('button', { name: 'Enable “SIEM relay EU”' }).waitFor();
    await page.getByRole('region', { name: 'Destination details' }).getByText('disabled', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Delete “SIEM relay EU”' }).click();
    const deleteDialog = page.getByRole('dialog', { name: 'Delete “SIEM relay EU”' });
    await deleteDialog.getByText('This cannot be undone.').waitFor();
    assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Cancel', 'the dialog opens on Cancel, not on Delete');
    await shot('delete-asked');
    await deleteDialog.getByRole('button', { name: 'Delete the destination' }).click();
    await page.waitForURL('**/destinations');
    await page.getByText('Destination “SIEM relay EU” deleted.').waitFor();
    await page.getByText('No event destinations yet.').waitFor();
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
});
