// Users and My account in headless Chromium against the service on the embedded database: a partner
// admin signs in with MFA, changes a user's role and a partner user's organization access, disables,
// enables and deletes a user (the delete asked with Cancel focused), invites someone (the mail lands
// in the outbox) and deletes the invitation; then on My account ends the session of another device,
// creates recovery codes (shown once, downloaded), signs out and in again with one, and changes the
// password. At 1280x900, then at 390x844 with no sideways scrolling. One screenshot per step.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { ADMIN, apiCall, cannotRun, launchBrowser, screenshots, startService, type Service, goToSection } from './harness.js';

const skip = cannotRun();
const PAULA = { email: 'paula@litware.test', password: 'a partner admin password 1' };
const TOM = { email: 'tom@contoso.test', password: 'a technician password 12' };
const NEW_PASSWORD = 'a brand new passphrase 34';
const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';

interface Tokens { accessToken: string; refreshToken: string }

/** POST to the service as a given browser would, answering the status and body. */
async function post(service: Service, route: string, body: unknown, userAgent = 'node'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${service.url}/api/v1${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': userAgent }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Turns MFA on for a user through the API (spending this step's code) and ends that session; returns its TOTP. */
async function enableMfa(service: Service, user: { email: string; password: string }): Promise<TOTP> {
  const first = await apiCall<Tokens>(service, 'POST', '/auth/login', user);
  const { secret } = await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, first.accessToken);
  const totp = new TOTP({ secret });
  await apiCall(service, 'POST', '/auth/mfa/enable', { code: totp.generate() }, first.accessToken);
  await apiCall(service, 'POST', '/auth/logout', { refreshToken: first.refreshToken });
  return totp;
}

/** The next step's code: the current one has been spent. */
const nextCode = (totp: TOTP) => totp.generate({ timestamp: Date.now() + 30_000 });

async function noSidewaysScroll(page: Page, where: string): Promise<void> {
  const [scroll, width] = await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]') as [number, number];
  assert.ok(scroll <= width, `${where}: the page scrolls sideways (${scroll} px wide in a ${width} px window)`);
}

/** Polls `done` until it holds, for up to 10 s. */
async function waitFor(done: () => Promise<boolean>, what: string): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 10_000;) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The focused element's tag and text, to say where keyboard focus is. */
async function focused(page: Page): Promise<{ tag: string; text: string; label: string | null }> {
  // A string, evaluated in the page: the service's tsconfig has no DOM types.
  return page.evaluate(`(() => {
    const el = document.activeElement;
    return { tag: el?.tagName ?? '', text: el?.textContent?.trim() ?? '', label: el?.getAttribute('aria-label') ?? null };
  })()`) as Promise<{ tag: string; text: string; label: string | null }>;
}

describe('web console: users and my account in a real browser', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let page: Page;
  let shot: (name: string) => Promise<void>;
  let adminToken = '';
  let totp: TOTP;
  let firefox: Tokens;
  let tom = '';
  let pat = '';
  let contoso = '';
  let codes: string[] = [];
  const pageErrors: string[] = [];

  before(async () => {
    [service, browser] = await Promise.all([startService(), launchBrowser()]);
    const adminTotp = await enableMfa(service, ADMIN);
    const { mfaToken } = await apiCall<{ mfaToken: string }>(service, 'POST', '/auth/login', ADMIN);
    adminToken = (await apiCall<Tokens>(service, 'POST', '/auth/mfa/verify', { mfaToken, code: nextCode(adminTotp) })).accessToken;
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Litware MSP', slug: 'litware' }, adminToken);
    contoso = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Contoso Clinics', slug: 'contoso-clinics' }, adminToken)).id;
    await apiCall(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Fabrikam Foods', slug: 'fabrikam-foods' }, adminToken);
    await apiCall(service, 'POST', '/users', { ...PAULA, name: 'Paula Partner', scope: 'partner', partnerId: partner.id, role: 'admin', orgAccess: 'all' }, adminToken);
    pat = (await apiCall<{ id: string }>(service, 'POST', '/users', { email: 'pat@litware.test', password: 'a partner tech password', name: 'Pat Partner', scope: 'partner', partnerId: partner.id, role: 'technician', orgAccess: 'none' }, adminToken)).id;
    tom = (await apiCall<{ id: string }>(service, 'POST', '/users', { ...TOM, name: 'Tom Tech', scope: 'organization', orgId: contoso, role: 'technician' }, adminToken)).id;
    // Paula's other device: signed in from Firefox on Windows before she turned MFA on.
    firefox = (await post(service, '/auth/login', PAULA, FIREFOX_ON_WINDOWS)).body as unknown as Tokens;
    totp = await enableMfa(service, PAULA);

    const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'account');
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  const user = (id: string) => apiCall<{ role: string; orgAccess: string | null; orgIds: string[]; disabled: boolean }>(service, 'GET', `/users/${id}`, undefined, adminToken);

  it('signs in as a partner admin with an MFA code', async () => {
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill(PAULA.email);
    await page.getByLabel('Password').fill(PAULA.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Authentication code').fill(nextCode(totp));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  });

  it('lists the users within reach and changes a user’s role', async () => {
    await goToSection(page, 'Users');
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    assert.deepEqual(await focused(page), { tag: 'H1', text: 'Users', label: null }, 'the heading takes the focus on arrival');
    const table = page.getByRole('table', { name: 'Users, newest first' });
    for (const name of ['Tom Tech', 'Pat Partner', 'Paula Partner']) await table.getByRole('link', { name }).waitFor();
    assert.equal(await table.getByText(ADMIN.email).count(), 0, 'the platform admin is outside a partner admin’s reach');
    await table.getByRole('row').filter({ hasText: 'Tom Tech' }).getByRole('link', { name: 'Contoso Clinics' }).waitFor();
    await table.getByRole('row').filter({ hasText: 'Pat Partner' }).getByText('Partner Litware MSP').waitFor();
    await shot('users-list');

    await table.getByRole('link', { name: 'Tom Tech' }).click();
    await page.getByRole('heading', { name: 'Tom Tech', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'Role' });
    assert.equal(await form.getByLabel('Role', { exact: true }).inputValue(), 'technician');
    await form.getByLabel('Role', { exact: true }).selectOption('readonly');
    await form.getByRole('button', { name: 'Save role of Tom Tech' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: Tom Tech now has the role readonly.' }).waitFor();
    assert.equal((await user(tom)).role, 'readonly');
    await shot('role-changed');
  });

  it('gives a partner user access to one organization', async () => {
    await page.getByRole('link', { name: '← Users' }).click();
    await page.getByRole('link', { name: 'Pat Partner' }).click();
    const form = page.getByRole('form', { name: 'Role and organization access' });
    await form.getByRole('radio', { name: 'Only the organizations checked below' }).check();
    await form.getByRole('checkbox', { name: 'Contoso Clinics' }).check();
    await form.getByRole('button', { name: 'Save role and access of Pat Partner' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: Pat Partner now has access to Contoso Clinics.' }).waitFor();
    const saved = await user(pat);
    assert.equal(saved.orgAccess, 'selected');
    assert.deepEqual(saved.orgIds, [contoso]);
    await shot('access-changed');
  });

  it('disables and enables a user, and deletes it after a question that opens on Cancel', async () => {
    await page.getByRole('link', { name: '← Users' }).click();
    await page.getByRole('link', { name: 'Tom Tech' }).click();
    await page.getByRole('button', { name: 'Disable Tom Tech' }).click();
    await page.getByText('Tom Tech is disabled: they cannot sign in').waitFor();
    await page.getByRole('region', { name: 'Details' }).getByText('disabled', { exact: true }).waitFor();
    assert.equal((await post(service, '/auth/login', TOM)).status, 403, 'a disabled user cannot sign in (ACCOUNT_DISABLED)');
    await shot('user-disabled');

    await page.getByRole('button', { name: 'Enable Tom Tech' }).click();
    await page.getByText('Tom Tech is enabled').waitFor();
    assert.equal((await post(service, '/auth/login', TOM)).status, 200, 'enabled again, the user signs in');

    await page.getByRole('button', { name: 'Delete Tom Tech' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Tom Tech' });
    await dialog.getByText('Delete the user Tom Tech (tom@contoso.test)?').waitFor();
    assert.equal((await focused(page)).text, 'Cancel', 'the dialog opens on Cancel, not on Delete');
    await shot('delete-asked');
    await dialog.getByRole('button', { name: 'Delete the user' }).click();
    await page.waitForURL('**/users');
    await page.getByText('User Tom Tech (tom@contoso.test) deleted.').waitFor();
    assert.equal((await focused(page)).tag, 'H1', 'back on the list, the heading has the focus');
    assert.equal(await page.getByRole('link', { name: 'Tom Tech' }).count(), 0);
  });

  it('invites a user by e-mail and deletes the invitation', async () => {
    await page.getByRole('button', { name: 'Invite user' }).click();
    const form = page.getByRole('form', { name: 'Invite a user' });
    assert.equal((await focused(page)).tag, 'INPUT', 'the form’s first field takes the focus');
    await form.getByLabel('E-mail').fill('nina@contoso.test');
    await form.getByLabel('Name', { exact: true }).fill('Nina New');
    await form.getByLabel('Belongs to').selectOption('organization');
    await form.getByLabel('Organization').selectOption({ label: 'Contoso Clinics' });
    await form.getByLabel('Role', { exact: true }).selectOption('technician');
    await shot('invite-form');
    await form.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText('Invitation sent to nina@contoso.test.').waitFor();
    const invitations = page.getByRole('table', { name: 'Pending invitations' });
    await invitations.getByRole('row').filter({ hasText: 'nina@contoso.test' }).filter({ hasText: 'Contoso Clinics' }).waitFor();
    const outbox = path.join(service.dataDir, 'outbox');
    const mail = readdirSync(outbox).map((f) => readFileSync(path.join(outbox, f), 'utf8')).find((m) => m.includes('nina@contoso.test'));
    assert.ok(mail, 'the invitation was mailed (to the outbox, without SMTP)');
    assert.match(mail.replace(/=\r?\n/g, '').replaceAll('=3D', '='), /accept-invitation#token=/);
    await shot('invited');

    await page.getByRole('button', { name: 'Delete invitation for nina@contoso.test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete invitation for nina@contoso.test' });
    assert.equal((await focused(page)).text, 'Cancel');
    await dialog.getByRole('button', { name: 'Delete the invitation' }).click();
    await page.getByText('Invitation for nina@contoso.test deleted: its link no longer works.').waitFor();
    await page.getByText('No invitation is waiting to be accepted.').waitFor();
  });

  it('shows this device and another one on My account, and ends the other', async () => {
    await page.getByRole('link', { name: /^My account/ }).click();
    await page.getByRole('heading', { name: 'My account', level: 1 }).waitFor();
    assert.equal((await focused(page)).text, 'My account');
    const sessions = page.getByRole('region', { name: 'Sessions' }).getByRole('listitem');
    await sessions.filter({ hasText: 'Firefox on Windows' }).filter({ hasText: 'no MFA code' }).waitFor();
    await sessions.filter({ hasText: 'this device' }).filter({ hasText: 'MFA verified' }).waitFor();
    assert.equal(await sessions.count(), 2);
    assert.match(await sessions.first().textContent() ?? '', /127\.0\.0\.1/);
    await shot('sessions');

    await page.getByRole('button', { name: 'Revoke session from Firefox on Windows' }).click();
    const outcome = page.getByRole('status').filter({ hasText: 'The session from Firefox on Windows has ended' });
    await outcome.waitFor();
    assert.ok(await outcome.evaluate((el) => el === el.ownerDocument.activeElement), 'the outcome takes the focus');
    // Polled from the test, not in the page: the console's content security policy forbids evaluated strings.
    await waitFor(async () => (await page.locator('.account-sessions li').count()) === 1, 'one session left in the list');
    assert.equal((await post(service, '/auth/refresh', { refreshToken: firefox.refreshToken })).status, 401, 'the other device is signed out');
  });

  it('creates recovery codes, shown once and downloadable', async () => {
    await page.getByRole('button', { name: 'Create recovery codes' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create recovery codes' });
    await dialog.getByText('Any recovery codes you created before stop working at once.').waitFor();
    assert.equal((await focused(page)).text, 'Cancel');
    await dialog.getByRole('button', { name: 'Create new codes' }).click();
    const revealed = page.getByTestId('revealed-secret');
    codes = (await revealed.textContent())!.trim().split('\n');
    assert.equal(codes.length, 10);
    for (const code of codes) assert.match(code, /^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);
    assert.equal((await focused(page)).tag, 'DIV', 'the codes take the focus');
    await page.getByText('they are shown only once').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as a text file' }).click()]);
    assert.equal(download.suggestedFilename(), 'recovery-codes.txt');
    assert.ok(readFileSync((await download.path())!, 'utf8').includes(codes[9]!), 'the file holds the codes');
    await shot('recovery-codes');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByText('Recovery codes stored.').waitFor();
    assert.equal((await page.content()).includes(codes[0]!), false, 'the codes are gone from the page');
  });

  it('signs out and back in with a recovery code', async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).first().click();
    await page.getByLabel('E-mail').fill(PAULA.email);
    await page.getByLabel('Password').fill(PAULA.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    const field = page.getByLabel('Recovery code');
    assert.ok(await field.evaluate((el) => el === el.ownerDocument.activeElement), 'the recovery code field takes the focus');
    await field.fill('aaaa-bbbb-cccc-dddd');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'That recovery code is wrong or already used' }).waitFor();
    await shot('recovery-sign-in');
    await field.fill(codes[0]!.toUpperCase());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();

    const { body } = await post(service, '/auth/login', PAULA);
    const reuse = await post(service, '/auth/mfa/verify', { mfaToken: body.mfaToken, recoveryCode: codes[0] });
    assert.equal(reuse.status, 401, 'a recovery code works once');
  });

  it('changes the password, the wrong current one refused at its field', async () => {
    await page.getByRole('link', { name: /^My account/ }).click();
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill('not my password');
    await form.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel('New password again').fill(NEW_PASSWORD);
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('This is not your current password.').waitFor();
    assert.ok(await form.getByLabel('Current password').evaluate((el) => el === el.ownerDocument.activeElement), 'the field to fix takes the focus');
    await form.getByLabel('Current password').fill(PAULA.password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed. Your other sessions have ended').waitFor();
    await shot('password-changed');
    assert.equal((await post(service, '/auth/login', PAULA)).status, 401, 'the old password is refused');
    assert.equal((await post(service, '/auth/login', { ...PAULA, password: NEW_PASSWORD })).body.mfaRequired, true, 'the new one is accepted');
  });

  it('fits a phone: no sideways scrolling on My account and the user pages', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('heading', { name: 'My account', level: 1 }).waitFor();
    await noSidewaysScroll(page, 'my account');
    await shot('phone-account');
    await goToSection(page, 'Users');
    await page.getByRole('link', { name: 'Pat Partner' }).waitFor();
    await noSidewaysScroll(page, 'users');
    await shot('phone-users');
    await page.getByRole('link', { name: 'Pat Partner' }).click();
    await page.getByRole('heading', { name: 'Pat Partner', level: 1 }).waitFor();
    await noSidewaysScroll(page, 'user page');
    await shot('phone-user');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
});
