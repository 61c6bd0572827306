// An automated accessibility check: axe-core (WCAG 2.0/2.1 A and AA rules) on every page of the
// console, signed in as the admin and as a read-only user, with the states pages have beyond their
// first look (a destination's and a user's detail, MFA setup, an open confirmation dialog, the MFA
// code step) and the pages without a session; no violation of impact "serious" or
// "critical" is allowed except those in EXCEPTIONS below (each named with rule, page and reason).
// axe is injected as a script tag, which the console's Content-Security-Policy would refuse, so this
// test's browser context bypasses the CSP; nothing else about the pages changes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { ADMIN, apiCall, cannotRun, launchBrowser, type Service, startService } from './harness.js';
import { freePort } from '../../test/support/free-port.js';

const skip = cannotRun();
if (skip && process.env.CI) throw new Error(`the console's browser tests must run in CI: ${skip}`);

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const READER = { email: 'rita@a11y-e2e.test', password: 'a reader password 12345' };

/** Known violations left in place on purpose: rule id + page (path pattern) + why. Empty when all are fixed. */
const EXCEPTIONS: { rule: string; page: RegExp; reason: string }[] = [];

interface Tokens { accessToken: string; refreshToken: string }
interface Enrolled { deviceId: string; agentId: string; authToken: string }
interface Violation { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }
interface Finding { page: string; rule: string; impact: string; help: string; targets: string[] }

const STEP = 30_000;

/** Runs axe on the page as it is now; returns its serious and critical violations not excepted. */
async function audit(page: Page, label: string): Promise<Finding[]> {
  const loaded = await page.evaluate('typeof window.axe !== "undefined"');
  if (!loaded) await page.addScriptTag({ content: AXE_SOURCE });
  const result = await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => ({ passes: r.passes.length, incomplete: r.incomplete.map((v) => v.id), violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })) }))",
  ) as { passes: number; incomplete: string[]; violations: Violation[] };
  const path = new URL(page.url()).pathname;
  const { violations } = result;
  // Every control names what it acts on: two buttons of one page never share a name (a row's
  // "Delete" says which row). The pagers' Previous and Next are told apart by their navigation.
  const repeated = await page.evaluate(
    "(() => { const seen = new Map(); for (const b of document.querySelectorAll('button, [role=button]')) { if (b.closest('nav.pager, dialog:not([open])') || !b.getClientRects().length) continue; const name = (b.getAttribute('aria-label') || b.textContent || '').trim(); seen.set(name, (seen.get(name) || 0) + 1); } return [...seen].filter(([, n]) => n > 1).map(([name, n]) => name + ' ×' + n); })()",
  ) as string[];
  if (repeated.length > 0) violations.push({ id: 'button-names-repeated', impact: 'serious', help: `buttons sharing a name: ${repeated.join(', ')}`, nodes: [] });
  // A11Y_VERBOSE=1 prints every violation of any impact and the number of rules that passed.
  if (process.env.A11Y_VERBOSE) console.log(`${label} (${path}): ${result.passes} rules passed; violations: ${violations.map((v) => `${v.id} [${v.impact}] ×${v.nodes.length}`).join(', ') || 'none'}; needs review: ${result.incomplete.join(', ') || 'none'}`);
  assert.ok(result.passes > 0, `axe ran no rules on ${path}`);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .filter((v) => !EXCEPTIONS.some((e) => e.rule === v.id && e.page.test(path)))
    .map((v) => ({ page: `${label} (${path})`, rule: v.id, impact: v.impact!, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
}

function report(findings: Finding[]): string {
  return findings.map((f) => `- ${f.page}: ${f.rule} [${f.impact}] ${f.help}\n    ${f.targets.slice(0, 8).join('\n    ')}${f.targets.length > 8 ? `\n    … and ${f.targets.length - 8} more` : ''}`).join('\n');
}

describe('web console accessibility (axe-core, WCAG A/AA, serious and critical)', { skip: skip ?? false }, () => {
  let service: Service;
  let browser: Browser;
  let adminSecret: string;
  let lastStep = 0;
  const ids = {} as { partner: string; org: string; site: string; device: string; destination: string; reader: string };

  async function openPage(): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 }, bypassCSP: true });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    return { context, page, errors };
  }

  /** Visits each path, waits for its main heading and the loading to end, and audits it. */
  async function visit(page: Page, paths: [string, string][]): Promise<Finding[]> {
    const findings: Finding[] = [];
    for (const [label, path] of paths) {
      await page.goto(path);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.waitForLoadState('networkidle');
      await page.waitForFunction('!document.querySelector("[aria-busy=true]")');
      findings.push(...await audit(page, label));
    }
    return findings;
  }

  before(async () => {
    service = await startService({ OUTBOUND_ALLOW_PRIVATE: 'true' });
    const first = await apiCall<Tokens>(service, 'POST', '/auth/login', ADMIN);
    adminSecret = (await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, first.accessToken)).secret;
    const totp = new TOTP({ secret: adminSecret });
    await apiCall(service, 'POST', '/auth/mfa/enable', { code: totp.generate() }, first.accessToken);
    const { mfaToken } = await apiCall<{ mfaToken: string }>(service, 'POST', '/auth/login', ADMIN);
    const at = Date.now() + STEP;
    lastStep = Math.floor(at / STEP);
    const token = (await apiCall<Tokens>(service, 'POST', '/auth/mfa/verify', { mfaToken, code: totp.generate({ timestamp: at }) })).accessToken;

    ids.partner = (await apiCall<{ id: string }>(service, 'POST', '/orgs/partners', { name: 'Northwind MSP', slug: 'northwind-msp' }, token)).id;
    ids.org = (await apiCall<{ id: string }>(service, 'POST', '/orgs/organizations', { partnerId: ids.partner, name: 'Contoso Dental', slug: 'contoso-dental' }, token)).id;
    ids.site = (await apiCall<{ id: string }>(service, 'POST', '/orgs/sites', { orgId: ids.org, name: 'Main office' }, token)).id;
    await apiCall(service, 'POST', '/api-keys', { orgId: ids.org, name: 'Automation', scopes: ['devices:read'] }, token);
    const { key } = await apiCall<{ key: string }>(service, 'POST', '/enrollment-keys', { orgId: ids.org, siteId: ids.site, name: 'office', maxUsage: 10 }, token);
    const device = await apiCall<Enrolled>(service, 'POST', '/agents/enroll', {
      enrollmentKey: key, hostname: 'reception-pc', osType: 'windows', osVersion: '10.0.19045', architecture: 'x86_64', agentVersion: '1.0.0',
    });
    ids.device = device.deviceId;
    ids.reader = (await apiCall<{ id: string }>(service, 'POST', '/users', { ...READER, name: 'Rita Reader', scope: 'organization', orgId: ids.org, role: 'readonly' }, token)).id;
    // A webhook nobody answers: its page shows the failed attempts too.
    ids.destination = (await apiCall<{ id: string }>(service, 'POST', '/event-destinations', {
      name: 'SIEM collector', kind: 'webhook', url: `http://127.0.0.1:${await freePort()}/hook`, orgId: ids.org,
    }, token)).id;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('has no serious or critical violations on any page, for the admin', async () => {
    const { context, page, errors } = await openPage();
    try {
      // The admin's MFA code: a time step after the one the seeding used (codes are single-use).
      while (Math.floor(Date.now() / STEP) < lastStep) await new Promise((resolve) => setTimeout(resolve, 500));
      await page.goto('/sign-in');
      await page.getByLabel('E-mail').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Authentication code').waitFor();
      const findings: Finding[] = [];
      findings.push(...await audit(page, 'sign-in flow: MFA code step'));
      await page.getByLabel('Authentication code').fill(new TOTP({ secret: adminSecret }).generate({ timestamp: Date.now() + STEP }));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
      findings.push(...await audit(page, 'sign-in flow: overview'));
      findings.push(...await visit(page, [
        ['overview', '/'],
        ['partners', '/partners'],
        ['partner page', `/partners/${ids.partner}`],
        ['organizations', '/organizations'],
        ['organization page', `/organizations/${ids.org}`],
        ['sites', '/sites'],
        ['site page', `/sites/${ids.site}`],
        ['devices', '/devices'],
        ['device overview', `/devices/${ids.device}`],
        ['device diagnostic logs', `/devices/${ids.device}/diagnostics`],
        ['device event logs', `/devices/${ids.device}/events`],
        ['device live event logs', `/devices/${ids.device}/live`],
        ['API keys', '/api-keys'],
        ['enrollment keys', '/enrollment-keys'],
        ['destinations', '/destinations'],
        ['destination page', `/destinations/${ids.destination}`],
        ['users', '/users'],
        ['user page', `/users/${ids.reader}`],
        ['audit log', '/audit'],
        ['my account', '/account'],
        ['MFA (on)', '/account/mfa'],
        ['not found', '/no-such-page'],
      ]));
      // A confirmation dialog open over its page.
      await page.goto(`/devices/${ids.device}`);
      await page.getByRole('button', { name: 'Decommission reception-pc' }).click();
      await page.getByRole('dialog', { name: 'Decommission reception-pc' }).waitFor();
      findings.push(...await audit(page, 'decommission dialog'));
      await page.keyboard.press('Escape');
      // An audit entry: the first one the log lists.
      await page.goto('/audit');
      await page.locator('main table a[href^="/audit/"]').first().click();
      await page.waitForURL(/\/audit\/[^/]+$/);
      findings.push(...await visit(page, [['audit entry', new URL(page.url()).pathname]]));
      assert.deepEqual(errors, []);
      assert.equal(findings.length, 0, `axe found serious or critical violations:\n${report(findings)}`);
    } finally {
      await context.close();
    }
  });

  it('has no serious or critical violations on the pages without a session', async () => {
    const { context, page, errors } = await openPage();
    try {
      // Links from e-mails with a token that is not valid: their pages say so.
      const findings = await visit(page, [
        ['sign-in', '/sign-in'],
        ['forgot password', '/forgot-password'],
        ['reset password (invalid link)', '/reset-password?token=not-a-valid-token'],
        ['accept invitation (invalid link)', '/accept-invitation?token=not-a-valid-token'],
      ]);
      assert.deepEqual(errors, []);
      assert.equal(findings.length, 0, `axe found serious or critical violations (no session):\n${report(findings)}`);
    } finally {
      await context.close();
    }
  });

  it('has no serious or critical violations on the pages a read-only user sees', async () => {
    const { context, page, errors } = await openPage();
    try {
      await page.goto('/sign-in');
      await page.getByLabel('E-mail').fill(READER.email);
      await page.getByLabel('Password').fill(READER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Later' }).click();
      await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
      // Every section its menu offers, then the detail pages of what it can read.
      const sections = await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').evaluateAll(
        (links) => links.map((a) => [(a as unknown as { textContent: string }).textContent.trim(), (a as unknown as { getAttribute(n: string): string }).getAttribute('href')] as [string, string]),
      );
      assert.ok(sections.length > 0, 'the reader sees some sections');
      const findings = await visit(page, [
        ...sections,
        ['organization page', `/organizations/${ids.org}`],
        ['site page', `/sites/${ids.site}`],
        ['device overview', `/devices/${ids.device}`],
        ['device diagnostic logs', `/devices/${ids.device}/diagnostics`],
        ['device event logs', `/devices/${ids.device}/events`],
        ['device live event logs', `/devices/${ids.device}/live`],
        ['my account', '/account'],
        ['MFA setup (off: QR code and secret)', '/account/mfa'],
      ]);
      // A control that the check can fail: a faint paragraph and an image without text are reported.
      await page.evaluate(`(() => { const p = document.createElement('p'); p.id = 'a11y-control'; p.style.color = '#ddd'; p.style.background = '#fff'; p.textContent = 'faint text'; const img = document.createElement('img'); img.src = '/favicon.svg'; p.append(img); document.querySelector('main').append(p); })()`);
      const control = new Set((await audit(page, 'control')).map((f) => f.rule));
      assert.ok(control.has('color-contrast') && control.has('image-alt'), `axe reports known violations (got ${[...control].join(', ') || 'none'})`);
      await page.evaluate(`document.getElementById('a11y-control').remove()`);
      assert.deepEqual(errors, []);
      assert.equal(findings.length, 0, `axe found serious or critical violations (read-only user):\n${report(findings)}`);
    } finally {
      await context.close();
    }
  });
});
