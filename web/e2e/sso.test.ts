// Single sign-on, invitations and password reset in headless Chromium, against the service on the
// embedded database with a real OpenID Provider (oidc-provider, test/support/oidc-idp.ts) and a real
// SMTP server (smtp-sink.ts), each on a free port. A system admin configures single sign-on on an
// organization in the console (checked at its fields, tested, saved); a user of that organization
// signs in e-mail first through the provider's login page and lands on the page asked for; an
// address outside the allowed domains ends on the failure page; once enforced, the password is
// refused and the provider is the only way left; an invitation and a password reset are followed
// from the mails received. At 1280x900, then at 390x844 with no sideways scrolling.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page, Route } from 'playwright-core';
import { TOTP } from 'otpauth';
import { startOidcIdp, type TestIdp } from '../../test/support/oidc-idp.js';
import { linkToken, startSmtpSink, type ReceivedMail, type SmtpSink } from '../../test/support/smtp-sink.js';
import { ADMIN, apiCall, cannotRun, launchBrowser, screenshots, startService, type Service, goToSection } from './harness.js';

const skip = cannotRun();
const CLIENT_ID = 'dms-console-e2e';
const CLIENT_SECRET = `secret-${randomBytes(8).toString('hex')}`;
const IVY = { email: 'ivy@fabrikam.test', name: 'Ivy Invited', password: 'an invited user passphrase 1' };
const IVY_NEW_PASSWORD = 'a reset passphrase for ivy 2';

interface Tokens { accessToken: string; refreshToken: string }
interface Organization { id: string; ssoConfig: { enabled: boolean; clientSecretSet: boolean; emailDomains: string[]; roleMapping: Record<string, string> } | null }

const nextCode = (totp: TOTP) => totp.generate({ timestamp: Date.now() + 30_000 });

async function noSidewaysScroll(page: Page, where: string): Promise<void> {
  const [scroll, width] = await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]') as [number, number];
  assert.ok(scroll <= width, `${where}: the page scrolls sideways (${scroll} px wide in a ${width} px window)`);
}

/** The focused element's tag and text (a string evaluated in the page: no DOM types here). */
async function focused(page: Page): Promise<{ tag: string; text: string }> {
  return page.evaluate(`(() => ({ tag: document.activeElement?.tagName ?? '', text: document.activeElement?.textContent?.trim() ?? '' }))()`) as Promise<{ tag: string; text: string }>;
}

/** The link of a received message that opens `path` (the whole URL, fragment included). */
function linkIn(mail: ReceivedMail, path: string): string {
  const token = linkToken(mail, path);
  const match = new RegExp(`(https?://\\S+/${path})#token=${token}`).exec(mail.text);
  return `${match![1]}#token=${token}`;
}

describe('web console: single sign-on, invitations and password reset in a real browser', { skip: skip ?? false }, () => {
  let service: Service;
  let idp: TestIdp;
  let smtp: SmtpSink;
  let browser: Browser;
  /** The system admin's tab, signed in once (codes of a TOTP step work once). */
  let page: Page;
  /** Another browser: the users who sign in through the provider or follow a mailed link. */
  let guest: Page;
  let shot: (name: string) => Promise<void>;
  let guestShot: (name: string) => Promise<void>;
  let adminToken = '';
  let adminTotp: TOTP;
  let contoso = '';
  let fabrikam = '';
  const accounts: Record<string, string> = {};
  const pageErrors: string[] = [];

  /**
   * The provider's login page, as the browser sees it: the test provider has no page of its own (its
   * tests say who signs in with ?login=), so the answer to the authorization request, a redirect to
   * its interaction, becomes a page whose form opens that interaction for the account picked.
   * (Playwright routes only the first request of a redirect chain, hence the authorization request.)
   */
  async function providerLoginPage(route: Route): Promise<void> {
    const url = new URL(route.request().url());
    if (url.pathname !== '/auth') return route.continue();
    const response = await route.fetch({ maxRedirects: 0 });
    const location = response.headers()['location'] ?? '';
    if (!location.includes('/interaction/')) return route.fulfill({ response });
    const options = Object.entries(accounts).map(([email, sub]) => `<option value="${sub}">${email}</option>`).join('');
    const cookies = response.headersArray().filter((h) => h.name.toLowerCase() === 'set-cookie').map((h) => h.value);
    await route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', ...(cookies.length > 0 ? { 'set-cookie': cookies.join('\n') } : {}) },
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head><body><main>
        <h1>Sign in at the test identity provider</h1>
        <form method="get" action="${new URL(location, url).pathname}"><label>Account <select name="login">${options}</select></label>
        <button type="submit">Sign in at the provider</button></form></main></body></html>`,
    });
  }

  async function signInThroughProvider(email: string, account: string): Promise<void> {
    await guest.getByLabel('E-mail').fill(email);
    await guest.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await guest.getByRole('heading', { name: 'Sign in at the test identity provider' }).waitFor();
    assert.equal(new URL(guest.url()).origin, idp.issuer, 'the browser is at the identity provider');
    await guest.getByLabel('Account').selectOption({ label: account });
    await guestShot('provider-login');
    await guest.getByRole('button', { name: 'Sign in at the provider' }).click();
  }

  before(async () => {
    smtp = await startSmtpSink();
    // PUBLIC_URL is left at its default, http://HOST:PORT: the address this test opens, so mailed
    // links and the redirect after single sign-on come back to this service.
    [service, browser] = await Promise.all([startService({ SMTP_URL: smtp.url }), launchBrowser()]);
    idp = await startOidcIdp({ clients: [{ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: `${service.url}/api/v1/auth/sso/callback` }] });
    accounts['nina@contoso.test'] = idp.addAccount({ email: 'nina@contoso.test', name: 'Nina Nurse', groups: ['contoso-admins'] });
    accounts['mallory@elsewhere.test'] = idp.addAccount({ email: 'mallory@elsewhere.test', name: 'Mallory Outsider' });

    const first = await apiCall<Tokens>(service, 'POST', '/auth/login', ADMIN);
    const { secret } = await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, first.accessToken);
    adminTotp = new TOTP({ secret });
    // Each TOTP step works once: the previous step's code turns MFA on, the current one opens the
    // API session, and the next one the console's.
    await apiCall(service, 'POST', '/auth/mfa/enable', { code: adminTotp.generate({ timestamp: Date.now() - 30_000 }) }, first.accessToken);
    await apiCall(service, 'POST', '/auth/logout', { refreshToken: first.refreshToken });
    const { mfaToken } = await apiCall<{ mfaToken: string }>(service, 'POST', '/auth/login', ADMIN);
    adminToken = (await apiCall<Tokens>(service, 'POST', '/auth/mfa/verify', { mfaToken, code: adminTotp.generate() })).accessToken;
    const partner = await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Litware MSP', slug: 'litware' }, adminToken);
    contoso = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Contoso Clinics', slug: 'contoso-clinics' }, adminToken)).id;
    fabrikam = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: partner.id, name: 'Fabrikam Foods', slug: 'fabrikam-foods' }, adminToken)).id;

    const admin = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 } });
    await admin.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
    const other = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 } });
    await other.route((url) => url.origin === idp.issuer && url.pathname === '/auth', providerLoginPage);
    for (const context of [admin, other]) context.setDefaultTimeout(15_000);
    [page, guest] = await Promise.all([admin.newPage(), other.newPage()]);
    for (const tab of [page, guest]) tab.on('pageerror', (err) => pageErrors.push(err.message));
    shot = screenshots(page, 'sso-admin');
    guestShot = screenshots(guest, 'sso-user');
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
    await idp?.stop();
    await smtp?.close();
  });

  const organization = (id: string) => apiCall<Organization>(service, 'GET', `/orgs/organizations/${id}`, undefined, adminToken);

  it('signs the admin in e-mail first: the password field comes for an address without single sign-on', async () => {
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    assert.equal(await page.getByRole('button', { name: 'Continue with single sign-on' }).count(), 0);
    await page.getByRole('link', { name: 'Forgot your password?' }).waitFor();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Authentication code').fill(nextCode(adminTotp));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  });

  it('sets up single sign-on on an organization: fields checked, the provider tested, then saved', async () => {
    await goToSection(page, 'Organizations');
    // The overview lists the organizations too: wait for the list page before choosing one.
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Contoso Clinics' }).click();
    await page.getByRole('heading', { name: 'Contoso Clinics', level: 1 }).waitFor();
    const section = page.getByRole('region', { name: 'Single sign-on' });
    await section.getByText('Not set up: the users of this organization sign in with their password.').waitFor();
    await section.getByRole('button', { name: 'Set up single sign-on' }).click();
    const form = page.getByRole('form', { name: 'Single sign-on settings' });
    assert.deepEqual(await focused(page), { tag: 'H3', text: 'Set up single sign-on' }, 'the form’s heading takes the focus');
    const redirect = `${service.url}/api/v1/auth/sso/callback`;
    assert.equal(await form.getByTestId('sso-redirect-uri').textContent(), redirect, 'the redirect URI to register at the provider');
    await form.getByRole('button', { name: 'Copy redirect URI' }).click();
    await form.getByText('Redirect URI copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), redirect);

    // Checked before anything is sent, each problem at its field, the first one focused.
    await form.getByLabel('Issuer').fill('http://idp.example.com');
    await form.getByRole('button', { name: 'Save single sign-on' }).click();
    await form.getByText('The issuer must be an https:// URL (http:// only on a loopback address).').waitFor();
    await form.getByText('Enter the client ID the identity provider gave this console.').waitFor();
    await form.getByText('Enter at least one e-mail domain, e.g. contoso.com.').waitFor();
    assert.equal(await form.getByLabel('Issuer').evaluate((el) => el === el.ownerDocument.activeElement), true, 'the first field to fix takes the focus');
    await shot('form-checked');

    // A provider that does not answer: the test says what failed, and nothing is saved.
    const closed = new URL(idp.issuer);
    closed.port = String(Number(closed.port) === 65535 ? 65534 : Number(closed.port) + 1);
    await form.getByLabel('Issuer').fill(closed.origin);
    await form.getByLabel('Client ID').fill(CLIENT_ID);
    await form.getByLabel('Client secret').fill(CLIENT_SECRET);
    await form.getByRole('button', { name: 'Test configuration' }).click();
    const failed = form.getByRole('alert').filter({ hasText: 'Test failed.' });
    await failed.waitFor();
    await failed.filter({ hasText: 'cannot be used' }).waitFor();
    assert.ok(await failed.evaluate((el) => el === el.ownerDocument.activeElement), 'the outcome takes the focus');
    await shot('test-failed');
    await form.getByLabel('Issuer').fill(idp.issuer);
    await form.getByRole('button', { name: 'Test configuration' }).click();
    const passed = form.getByRole('status').filter({ hasText: 'Test passed: the identity provider answered.' });
    await passed.waitFor();
    await passed.getByText(`${idp.issuer}/auth`, { exact: true }).waitFor();
    assert.ok(await passed.evaluate((el) => el === el.ownerDocument.activeElement), 'the outcome takes the focus');
    await shot('test-passed');
    assert.equal((await organization(contoso)).ssoConfig, null, 'testing saves nothing');

    await form.getByLabel('E-mail domains').fill('contoso.test');
    await form.getByRole('checkbox', { name: /just-in-time provisioning/ }).check();
    await form.getByLabel('Default role').selectOption('readonly');
    await form.getByLabel('Role claim').fill('groups');
    await form.getByRole('button', { name: 'Add a mapping' }).click();
    await form.getByLabel('Claim value 1', { exact: true }).fill('contoso-admins');
    await form.getByLabel('Role for claim value 1').selectOption('admin');
    await shot('form-filled');
    await form.getByRole('button', { name: 'Save single sign-on' }).click();
    const saved = section.getByRole('status').filter({ hasText: 'Single sign-on of Contoso Clinics saved.' });
    await saved.waitFor();
    assert.ok(await saved.evaluate((el) => el === el.ownerDocument.activeElement), 'the outcome takes the focus');
    await section.getByText('Stored (never shown)').waitFor();
    await section.getByText('contoso-admins → admin').waitFor();
    const stored = (await organization(contoso)).ssoConfig;
    assert.deepEqual({ enabled: stored?.enabled, secret: stored?.clientSecretSet, domains: stored?.emailDomains, mapping: stored?.roleMapping },
      { enabled: true, secret: true, domains: ['contoso.test'], mapping: { 'contoso-admins': 'admin' } });
    assert.equal(JSON.stringify(stored).includes(CLIENT_SECRET), false, 'the secret is never read back');
    await shot('sso-saved');

    // Removing asks first, with Cancel focused; cancelled here, so the configuration stays.
    await section.getByRole('button', { name: 'Remove single sign-on' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove single sign-on' });
    await dialog.getByText('Remove single sign-on from Contoso Clinics?').waitFor();
    assert.equal((await focused(page)).text, 'Cancel', 'the question opens on Cancel');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.notEqual((await organization(contoso)).ssoConfig, null);
  });

  it('signs a user of the organization in through the provider and opens the page asked for', async () => {
    await guest.goto('/devices');
    await guest.waitForURL('**/sign-in');
    await guest.getByLabel('E-mail').fill('nina@contoso.test');
    await guest.getByRole('button', { name: 'Continue with single sign-on' }).waitFor();
    assert.equal(await guest.getByLabel('Password').count(), 0, 'no password field for a single sign-on address');
    await guest.getByRole('button', { name: 'Use your password instead' }).waitFor();
    await guestShot('sign-in-sso-step');
    await signInThroughProvider('nina@contoso.test', 'nina@contoso.test');
    await guest.waitForURL('**/devices');
    await guest.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    assert.equal(new URL(guest.url()).hash, '', 'no code left in the address bar');
    await guest.getByRole('link', { name: /^My account: Nina Nurse · admin \(organization\)/ }).waitFor();
    await guestShot('signed-in-through-sso');
    const users = await apiCall<{ data: { email: string; orgId: string | null; role: string }[] }>(service, 'GET', '/users?limit=100', undefined, adminToken);
    assert.deepEqual(users.data.filter((u) => u.email === 'nina@contoso.test').map((u) => [u.orgId, u.role]), [[contoso, 'admin']], 'created at first sign-in, with the mapped role');
  });

  it('shows the failure page for an address outside the allowed domains, with the way back', async () => {
    await guest.getByRole('button', { name: 'Sign out', exact: true }).click();
    // Signed out at the provider too: its session would otherwise sign Nina in again without a page.
    await guest.context().clearCookies();
    await signInThroughProvider('someone@contoso.test', 'mallory@elsewhere.test');
    await guest.getByRole('heading', { name: 'Single sign-on failed', level: 1 }).waitFor();
    await guest.getByRole('alert').filter({ hasText: 'outside the domains allowed' }).waitFor();
    assert.equal(new URL(guest.url()).pathname, '/sso');
    assert.equal(new URL(guest.url()).hash, '', 'the fragment is cleared once read');
    await guestShot('sso-failed');
    const users = await apiCall<{ data: { email: string }[] }>(service, 'GET', '/users?limit=100', undefined, adminToken);
    assert.equal(users.data.some((u) => u.email === 'mallory@elsewhere.test'), false, 'nobody was created');
    await guest.getByRole('link', { name: 'Back to sign in' }).click();
    await guest.getByLabel('E-mail').waitFor();
  });

  it('enforces single sign-on: the password is refused and the provider is left as the only way in', async () => {
    const section = page.getByRole('region', { name: 'Single sign-on' });
    await section.getByRole('button', { name: 'Edit single sign-on' }).click();
    const form = page.getByRole('form', { name: 'Single sign-on settings' });
    await form.getByText('A secret is stored (it is never shown). Leave empty to keep the stored secret.').waitFor();
    await form.getByRole('checkbox', { name: /^Enforce/ }).check();
    await form.getByRole('button', { name: 'Save single sign-on' }).click();
    await section.getByRole('status').filter({ hasText: 'Single sign-on of Contoso Clinics saved.' }).waitFor();
    await section.getByText('Refused (single sign-on enforced)').waitFor();
    assert.equal((await organization(contoso)).ssoConfig?.clientSecretSet, true, 'the empty secret field kept the stored secret');

    await guest.getByLabel('E-mail').fill('nina@contoso.test');
    await guest.getByRole('button', { name: 'Use your password instead' }).click();
    await guest.getByLabel('Password').fill('not how nina signs in');
    await guest.getByRole('button', { name: 'Sign in' }).click();
    await guest.getByText('Your organization requires single sign-on: this account cannot sign in with a password.').waitFor();
    assert.equal(await guest.getByRole('button', { name: 'Use your password instead' }).count(), 0, 'no password way any more');
    assert.equal((await focused(guest)).text, 'Continue with single sign-on', 'the way in takes the focus');
    await guestShot('sso-required');
  });

  it('accepts an invitation through the link of the mail received', async () => {
    await apiCall(service, 'POST', '/users/invitations', { email: IVY.email, name: 'Ivy', scope: 'organization', orgId: fabrikam, role: 'technician' }, adminToken);
    const mail = await smtp.waitFor((m) => m.to.includes(IVY.email) && /accept-invitation#token=/.test(m.text));
    const link = linkIn(mail, 'accept-invitation');
    assert.ok(link.startsWith(`${service.url}/accept-invitation#token=`), `the link comes back to this service: ${link}`);
    await guest.goto(link);
    await guest.getByRole('heading', { name: 'Accept your invitation', level: 1 }).waitFor();
    assert.equal(new URL(guest.url()).hash, '', 'the token leaves the address bar');
    const form = guest.getByRole('form', { name: 'Accept invitation' });
    await form.getByLabel('Your name').fill(IVY.name);
    await form.getByLabel('New password', { exact: true }).fill(IVY.password);
    await form.getByLabel('New password again').fill('something else entirely');
    await form.getByRole('button', { name: 'Accept invitation and sign in' }).click();
    await form.getByText('This does not match the password above.').waitFor();
    await form.getByLabel('New password again').fill(IVY.password);
    await guestShot('invitation-form');
    await form.getByRole('button', { name: 'Accept invitation and sign in' }).click();
    await guest.getByRole('heading', { name: 'Set up multi-factor authentication' }).waitFor();
    await guest.getByRole('link', { name: /^My account: Ivy Invited · technician \(organization\)/ }).waitFor();

    // The same link again, signed in: the page says who is signed in, and that the link is spent.
    await guest.goto(link);
    await guest.getByRole('note').filter({ hasText: 'You are signed in as Ivy Invited (ivy@fabrikam.test)' }).waitFor();
    await form.getByLabel('New password', { exact: true }).fill(IVY.password);
    await form.getByLabel('New password again').fill(IVY.password);
    await form.getByRole('button', { name: 'Accept invitation and sign in' }).click();
    await guest.getByText('This invitation link is not valid any more (used, withdrawn or expired): ask for a new one.').waitFor();
    await guestShot('invitation-spent');
    await guest.getByRole('link', { name: 'Back to the console' }).click();
    await guest.getByRole('button', { name: 'Sign out', exact: true }).click();
  });

  it('resets a forgotten password through the link of the mail received', async () => {
    await guest.getByRole('link', { name: 'Forgot your password?' }).click();
    await guest.getByRole('heading', { name: 'Forgot your password?', level: 1 }).waitFor();
    assert.deepEqual(await focused(guest), { tag: 'H1', text: 'Forgot your password?' }, 'the heading takes the focus on arrival');
    await guest.getByLabel('E-mail').fill(IVY.email);
    await guest.getByRole('button', { name: 'Send reset link' }).click();
    const sent = guest.getByRole('status').filter({ hasText: `If an account exists for ${IVY.email}, we sent a link to it.` });
    await sent.waitFor();
    assert.ok(await sent.evaluate((el) => el === el.ownerDocument.activeElement), 'the outcome takes the focus');
    await guestShot('reset-requested');
    const mail = await smtp.waitFor((m) => m.to.includes(IVY.email) && /reset-password#token=/.test(m.text));
    const link = linkIn(mail, 'reset-password');
    assert.ok(link.startsWith(`${service.url}/reset-password#token=`), `the link comes back to this service: ${link}`);

    await guest.goto(link);
    await guest.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();
    assert.equal(new URL(guest.url()).hash, '', 'the token leaves the address bar');
    await guest.getByLabel('New password', { exact: true }).fill('short');
    await guest.getByRole('button', { name: 'Set new password' }).click();
    await guest.getByText('The password needs 8 to 256 characters.').waitFor();
    await guest.getByLabel('New password', { exact: true }).fill(IVY_NEW_PASSWORD);
    await guest.getByLabel('New password again').fill(IVY_NEW_PASSWORD);
    await guest.getByRole('button', { name: 'Set new password' }).click();
    await guest.getByRole('heading', { name: 'Password changed', level: 1 }).waitFor();
    await guestShot('reset-done');
    await guest.getByRole('link', { name: 'Sign in' }).click();
    await guest.getByLabel('E-mail').fill(IVY.email);
    await guest.getByLabel('Password').fill(IVY_NEW_PASSWORD);
    await guest.getByRole('button', { name: 'Sign in' }).click();
    await guest.getByRole('link', { name: /^My account: Ivy Invited/ }).waitFor();
    await guest.getByRole('button', { name: 'Sign out', exact: true }).click();

    await guest.goto(link);
    await guest.getByLabel('New password', { exact: true }).fill('yet another passphrase 3');
    await guest.getByLabel('New password again').fill('yet another passphrase 3');
    await guest.getByRole('button', { name: 'Set new password' }).click();
    await guest.getByText('This password reset link is not valid any more').waitFor();
    await guest.getByRole('link', { name: 'Ask for a new link' }).waitFor();
  });

  it('fits a phone: no sideways scrolling on the signed-out pages and the single sign-on form', async () => {
    await guest.setViewportSize({ width: 390, height: 844 });
    await noSidewaysScroll(guest, 'spent reset link');
    await guest.goto('/sign-in');
    await guest.getByLabel('E-mail').fill('nina@contoso.test');
    await guest.getByRole('button', { name: 'Continue with single sign-on' }).waitFor();
    await noSidewaysScroll(guest, 'sign-in, single sign-on step');
    await guestShot('phone-sign-in');
    await guest.goto('/sso#error=SSO_FAILED');
    await guest.getByRole('heading', { name: 'Single sign-on failed' }).waitFor();
    await noSidewaysScroll(guest, 'single sign-on failure');
    await guest.goto('/forgot-password');
    await guest.getByLabel('E-mail').waitFor();
    await noSidewaysScroll(guest, 'forgot password');
    await guest.goto('/accept-invitation#token=not-a-real-token');
    await guest.getByLabel('New password again').waitFor();
    await noSidewaysScroll(guest, 'accept invitation');
    await guestShot('phone-invitation');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Edit single sign-on' }).click();
    await page.getByRole('form', { name: 'Single sign-on settings' }).waitFor();
    await noSidewaysScroll(page, 'single sign-on form');
    await shot('phone-sso-form');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('region', { name: 'Single sign-on' }).getByText('Stored (never shown)').waitFor();
    await noSidewaysScroll(page, 'organization page with single sign-on');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
});
