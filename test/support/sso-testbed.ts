// The service and a real OpenID Provider side by side, with the steps of a single sign-on as a
// browser would take them (discover, the provider's login, the callback, the exchange), for the
// single sign-on tests. Every line the service logs is kept: failures are told apart by the reason
// logged, and secrets can be looked for in it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { SYSTEM_SCOPE, withTenant } from '../../src/db/tenant-scope.js';
import { testApp, type Backend, type TestApp } from './app.js';
import { as, loginWithMfa, type Session } from './clients.js';
import { createOrg, createPartner, createUser, type TestUser } from './factory.js';
import { startOidcIdp, type TestIdp } from './oidc-idp.js';

export const PUBLIC_URL = 'https://console.example.test';
export const REDIRECT_URI = `${PUBLIC_URL}/api/v1/auth/sso/callback`;
export const unique = () => randomBytes(4).toString('hex');

export interface SsoTestbed {
  t: TestApp;
  idp: TestIdp;
  /** A system admin's MFA-verified session. */
  admin: Session;
  logLines: string[];
  /** Client secrets at the provider, by client id: client-a, client-b, client-short (60-second ID tokens). */
  secrets: Record<'client-a' | 'client-b' | 'client-short', string>;
  close(): Promise<void>;
  sql<T extends object>(text: string, params?: unknown[]): Promise<T[]>;
  /** An organization whose configuration signs in a fresh domain through client-a (overrides merged in). */
  ssoOrg(overrides?: Record<string, unknown>): Promise<{ partnerId: string; orgId: string; domain: string }>;
  userWithEmail(opts: Parameters<typeof createUser>[1], email: string): Promise<TestUser>;
  /** POST /auth/sso/discover, expecting single sign-on: the authorization URL. */
  discover(email: string): Promise<string>;
  /** GET the callback with the provider's answer: where the service sends the browser. */
  callback(back: string): Promise<string>;
  /** discover → the provider's login as `sub` → callback. */
  signIn(email: string, sub: string, amr?: string[]): Promise<string>;
  /** The one-time code of a successful callback. */
  codeOf(location: string): string;
  /** The browser was sent to the failure page, and the log gives this reason (and an error matching `error`). */
  assertFailed(location: string, reason: string, error?: RegExp): Promise<void>;
  exchange(code: string): Promise<LightMyRequestResponse>;
  /** Runs `fn` with the service's clock moved by `ms`, then moves it back. */
  travel<T>(ms: number, fn: () => Promise<T>): Promise<T>;
}

export async function startSsoTestbed(options: { backend?: Backend } = {}): Promise<SsoTestbed> {
  const secrets = { 'client-a': `secret-a-${unique()}`, 'client-b': `secret-b-${unique()}`, 'client-short': `secret-s-${unique()}` };
  const idp = await startOidcIdp({
    clients: [
      { clientId: 'client-a', clientSecret: secrets['client-a'], redirectUri: REDIRECT_URI },
      { clientId: 'client-b', clientSecret: secrets['client-b'], redirectUri: REDIRECT_URI },
      { clientId: 'client-short', clientSecret: secrets['client-short'], redirectUri: REDIRECT_URI, idTokenTtlSeconds: 60 },
    ],
  });
  const logLines: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const t = await testApp({ ...options, env: { PUBLIC_URL, LOG_LEVEL: 'trace' }, logStream });
  const admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'system' }), t.clock);

  const sql = <T extends object>(text: string, params: unknown[] = []) =>
    withTenant(t.db, SYSTEM_SCOPE, async (tx) => (await tx.query<T>(text, params)).rows);

  const bed: SsoTestbed = {
    t, idp, admin, logLines, secrets, sql,
    async close() {
      await t.close();
      await idp.stop();
    },
    async ssoOrg(overrides = {}) {
      const partner = await createPartner(t.db);
      const org = await createOrg(t.db, partner.id);
      const domain = `org-${unique()}.test`;
      const ssoConfig = { enabled: true, issuer: idp.issuer, clientId: 'client-a', clientSecret: secrets['client-a'], emailDomains: [domain], defaultRole: 'readonly', ...overrides };
      const res = await as(t.app, admin)({ method: 'PATCH', url: `/api/v1/orgs/organizations/${org.id}`, payload: { ssoConfig } });
      assert.equal(res.statusCode, 200, res.body);
      return { partnerId: partner.id, orgId: org.id, domain };
    },
    async userWithEmail(opts, email) {
      const user = await createUser(t.db, opts);
      await sql(`update users set email = $2 where id = $1`, [user.id, email]);
      return { ...user, email };
    },
    async discover(email) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/discover', payload: { email } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().sso, true, res.body);
      return res.json().authorizationUrl;
    },
    async callback(back) {
      const url = new URL(back);
      assert.equal(`${url.origin}${url.pathname}`, REDIRECT_URI);
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/sso/callback${url.search}` });
      assert.equal(res.statusCode, 302, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      return String(res.headers.location);
    },
    async signIn(email, sub, amr) {
      return bed.callback(await idp.signIn(await bed.discover(email), sub, amr ? { amr } : {}));
    },
    codeOf(location) {
      assert.match(location, new RegExp(`^${PUBLIC_URL}/sso#code=[A-Za-z0-9_-]{43}$`), location);
      return location.split('#code=')[1]!;
    },
    async assertFailed(location, reason, error) {
      assert.equal(location, `${PUBLIC_URL}/sso#error=SSO_FAILED`);
      await new Promise((resolve) => setImmediate(resolve));
      const failures = logLines.map((line) => JSON.parse(line) as { sso?: { reason: string; error?: string } }).filter((l) => l.sso);
      const last = failures.at(-1)?.sso;
      assert.equal(last?.reason, reason, JSON.stringify(last));
      if (error) assert.match(last?.error ?? '', error);
    },
    exchange: (code) => t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/exchange', payload: { code } }),
    async travel(ms, fn) {
      t.clock.advance(ms);
      try {
        return await fn();
      } finally {
        t.clock.advance(-ms);
      }
    },
  };
  return bed;
}
