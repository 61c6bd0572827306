// Single sign-on through a real OpenID Provider (oidc-provider on a free port): the whole code
// flow, and every way it must fail without signing anyone in or creating anything; on every backend.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends } from '../../../test/support/app.js';
import { as, assertProblem } from '../../../test/support/clients.js';
import { startOidcIdp } from '../../../test/support/oidc-idp.js';
import { REDIRECT_URI, startSsoTestbed, unique, type SsoTestbed } from '../../../test/support/sso-testbed.js';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

for (const backend of backends()) describe(`single sign-on with OpenID Connect on ${backend}`, () => {
  let bed: SsoTestbed;
  before(async () => {
    bed = await startSsoTestbed({ backend });
  });
  after(() => bed?.close());

  it('signs an organization’s user in through the whole code flow, in one provider round trip once warm', async () => {
    const { orgId, domain } = await bed.ssoOrg();
    const user = await bed.userWithEmail({ scope: 'organization', orgId, role: 'technician' }, `alice@${domain}`);
    const sub = bed.idp.addAccount({ email: user.email.toUpperCase(), name: 'Alice' });

    const authorizationUrl = new URL(await bed.discover(user.email));
    assert.equal(authorizationUrl.origin, bed.idp.issuer);
    const p = authorizationUrl.searchParams;
    assert.equal(p.get('response_type'), 'code');
    assert.equal(p.get('client_id'), 'client-a');
    assert.equal(p.get('redirect_uri'), REDIRECT_URI);
    assert.equal(p.get('code_challenge_method'), 'S256');
    assert.ok(p.get('code_challenge') && p.get('state') && p.get('nonce'));
    assert.equal(p.get('login_hint'), user.email);

    const location = await bed.callback(await bed.idp.signIn(authorizationUrl.href, sub));
    const res = await bed.exchange(bed.codeOf(location));
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.user.id, user.id);
    assert.equal(body.user.mfaVerified, false);
    assert.equal((await as(bed.t.app, body)({ method: 'GET', url: '/api/v1/auth/me' })).json().id, user.id);
    const [session] = await bed.sql<{ sso: boolean }>(`select sso from sessions where user_id = $1`, [user.id]);
    assert.equal(session?.sso, true);
    const [audit] = await bed.sql<{ details: { method: string } }>(`select details from audit_logs where action = 'user.login' and actor_id = $1`, [user.id]);
    assert.equal(audit?.details.method, 'sso');

    // Warm: discovery and JWKS are cached, so the callback's only call to the provider is /token.
    const before = new Map(bed.idp.requests);
    const url = await bed.discover(user.email);
    const counted = (path: string) => (bed.idp.requests.get(path) ?? 0) - (before.get(path) ?? 0);
    assert.equal(counted('/.well-known/openid-configuration') + counted('/jwks'), 0, 'discover asks the provider nothing');
    const back = await bed.idp.signIn(url, sub);
    const pages = new Map(bed.idp.requests);
    bed.codeOf(await bed.callback(back));
    const calls = [...bed.idp.requests].filter(([path, n]) => n !== (pages.get(path) ?? 0)).map(([path]) => path);
    assert.deepEqual(calls, ['/token']);
  });

  it('trades an exchange code once, within 60 seconds', async () => {
    const { orgId, domain } = await bed.ssoOrg();
    const user = await bed.userWithEmail({ scope: 'organization', orgId }, `bob@${domain}`);
    const sub = bed.idp.addAccount({ email: user.email });
    const code = bed.codeOf(await bed.signIn(user.email, sub));
    assert.equal((await bed.exchange(code)).statusCode, 200);
    assertProblem(await bed.exchange(code), 401, 'SSO_FAILED');
    const late = bed.codeOf(await bed.signIn(user.email, sub));
    await bed.travel(61_000, async () => assertProblem(await bed.exchange(late), 401, 'SSO_FAILED'));
    // Two browsers racing with one code: one session.
    const raced = bed.codeOf(await bed.signIn(user.email, sub));
    assert.deepEqual((await Promise.all([bed.exchange(raced), bed.exchange(raced)])).map((r) => r.statusCode).sort(), [200, 401]);
    assertProblem(await bed.exchange('A'.repeat(43)), 401, 'SSO_FAILED');
    assertProblem(await bed.exchange('not a code'), 401, 'SSO_FAILED');
    assertProblem(await bed.exchange(''), 401, 'SSO_FAILED');
    assertProblem(await bed.exchange('A'.repeat(300)), 401, 'SSO_FAILED');
    assert.equal((await bed.sql(`select 1 from sessions where user_id = $1`, [user.id])).length, 2);
  });

  it('fails a forged, replayed or expired state', async () => {
    const { orgId, domain } = await bed.ssoOrg();
    const user = await bed.userWithEmail({ scope: 'organization', orgId }, `carol@${domain}`);
    const sub = bed.idp.addAccount({ email: user.email });
    const back = await bed.idp.signIn(await bed.discover(user.email), sub);
    const forged = new URL(back);
    forged.searchParams.set('state', randomBytes(32).toString('base64url'));
    await bed.assertFailed(await bed.callback(forged.href), 'state_unknown');
    bed.codeOf(await bed.callback(back)); // the real answer still works once…
    await bed.assertFailed(await bed.callback(back), 'state_used'); // …and only once
    // Even when the answer arrives twice at the same moment.
    const twice = await bed.idp.signIn(await bed.discover(user.email), sub);
    const landed = await Promise.all([bed.callback(twice), bed.callback(twice)]);
    assert.deepEqual(landed.map((l) => l.includes('#code=')).sort(), [false, true]);
    const slow = await bed.discover(user.email);
    const answer = await bed.idp.signIn(slow, sub);
    await bed.travel(10 * 60_000 + 1000, async () => bed.assertFailed(await bed.callback(answer), 'state_expired'));
    const missing = await bed.t.app.inject({ method: 'GET', url: '/api/v1/auth/sso/callback?code=x' });
    await bed.assertFailed(String(missing.headers.location), 'state_missing');
    // The provider's own refusal (the user cancelled) carries a valid state: a failure all the same.
    const cancelled = new URL(REDIRECT_URI);
    cancelled.searchParams.set('state', new URL(await bed.discover(user.email)).searchParams.get('state')!);
    cancelled.searchParams.set('error', 'access_denied');
    cancelled.searchParams.set('iss', bed.idp.issuer);
    await bed.assertFailed(await bed.callback(cancelled.href), 'idp_rejected', /access_denied/);
    assert.equal((await bed.sql(`select 1 from sso_exchange_codes where user_id = $1`, [user.id])).length, 2);
  });

  it('keeps an e-mail’s five newest unused sign-ins, and bounds what one address may start', async () => {
    const { orgId, domain } = await bed.ssoOrg();
    const user = await bed.userWithEmail({ scope: 'organization', orgId }, `dora@${domain}`);
    const sub = bed.idp.addAccount({ email: user.email });
    const started = [];
    for (let i = 0; i < 6; i++) started.push(await bed.idp.signIn(await bed.discover(user.email.toUpperCase()), sub));
    await bed.assertFailed(await bed.callback(started[0]!), 'state_unknown'); // the oldest made room
    bed.codeOf(await bed.callback(started[5]!));
    bed.codeOf(await bed.callback(started[1]!));

    // An address that started 300 in ten minutes is refused (Retry-After), others are not.
    const discover = (remoteAddress: string) =>
      bed.t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/discover', payload: { email: `someone-${unique()}@${domain}` }, remoteAddress });
    await bed.sql(
      `insert into sso_sign_ins (state_hash, nonce, code_verifier, partner_id, org_id, issuer, client_id, created_at, expires_at, email_key, client_key)
       select md5(random()::text), 'n', 'v', partner_id, org_id, issuer, client_id, now(), now() + interval '10 minutes', 'flood-' || g, '198.51.100.7'
         from (select * from sso_sign_ins where org_id = $1 limit 1) s, generate_series(1, 300) g`, [orgId]);
    const refused = await discover('198.51.100.7');
    assertProblem(refused, 429, 'RATE_LIMITED');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal((await discover('198.51.100.8')).statusCode, 200);
  });

  it('fails an ID token with a wrong nonce, for another client, with a forged signature, or expired', async () => {
    const { orgId, domain } = await bed.ssoOrg();
    const user = await bed.userWithEmail({ scope: 'organization', orgId }, `dave@${domain}`);
    const sub = bed.idp.addAccount({ email: user.email });
    const codes = async () => (await bed.sql<{ n: number }>(`select count(*)::int as n from sso_exchange_codes where user_id = $1`, [user.id]))[0]!.n;

    // The nonce the app expects is not the one the provider puts in the ID token.
    const url = new URL(await bed.discover(user.email));
    const stateHash = createHash('sha256').update(url.searchParams.get('state')!).digest('hex');
    await bed.sql(`update sso_sign_ins set nonce = $2 where state_hash = $1`, [stateHash, randomBytes(32).toString('base64url')]);
    await bed.assertFailed(await bed.callback(await bed.idp.signIn(url.href, sub)), 'idp_rejected', /nonce/);

    // A genuine ID token, for the same user and nonce, but issued to client-b.
    const other = new URL(await bed.discover(user.email));
    const foreign = await bed.idp.idTokenFor('client-b', sub, other.searchParams.get('nonce')!);
    assert.deepEqual(decode(foreign.split('.')[1]!).aud, 'client-b');
    bed.idp.tamperTokens = (body) => ({ ...body, id_token: foreign });
    try {
      await bed.assertFailed(await bed.callback(await bed.idp.signIn(other.href, sub)), 'idp_rejected', /aud/);
      // The provider's own token with one claim changed: the signature no longer matches.
      bed.idp.tamperTokens = (body) => {
        const [header, payload, signature] = String(body.id_token).split('.');
        return { ...body, id_token: [header, b64({ ...decode(payload!), email: `eve@${domain}` }), signature].join('.') };
      };
      await bed.assertFailed(await bed.signIn(user.email, sub), 'idp_rejected', /signature/i);
      // No signature at all.
      bed.idp.tamperTokens = (body) => {
        const [, payload] = String(body.id_token).split('.');
        return { ...body, id_token: `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.` };
      };
      await bed.assertFailed(await bed.signIn(user.email, sub), 'idp_rejected');
    } finally {
      bed.idp.tamperTokens = null;
    }
    assert.equal(await codes(), 0);

    // client-short's ID tokens live 60 seconds: two minutes later by the service's clock, expired.
    const short = await bed.ssoOrg({ clientId: 'client-short', clientSecret: bed.secrets['client-short'] });
    const late = await bed.userWithEmail({ scope: 'organization', orgId: short.orgId }, `frank@${short.domain}`);
    const lateSub = bed.idp.addAccount({ email: late.email });
    bed.codeOf(await bed.signIn(late.email, lateSub)); // in time, it works
    const back = await bed.idp.signIn(await bed.discover(late.email), lateSub);
    await bed.travel(120_000, async () => bed.assertFailed(await bed.callback(back), 'idp_rejected', /"exp"|timestamp/));
  });

  it('signs in only users of the configured tenant: another tenant’s address is never signed in, nor provisioned', async () => {
    const { partnerId, orgId, domain } = await bed.ssoOrg({ jitProvisioning: true });
    const sibling = (await bed.sql<{ id: string }>(`insert into organizations (partner_id, name, slug) values ($1, 'Sibling', $2) returning id`, [partnerId, `sib-${unique()}`]))[0]!;
    const foreignPartner = (await bed.sql<{ id: string }>(`insert into partners (name, slug) values ('Other', $1) returning id`, [`other-${unique()}`]))[0]!;
    const foreignOrg = (await bed.sql<{ id: string }>(`insert into organizations (partner_id, name, slug) values ($1, 'Theirs', $2) returning id`, [foreignPartner.id, `theirs-${unique()}`]))[0]!;
    const outsiders = [
      await bed.userWithEmail({ scope: 'organization', orgId: foreignOrg.id }, `mallory@${domain}`),
      await bed.userWithEmail({ scope: 'organization', orgId: sibling.id }, `sib@${domain}`),
      await bed.userWithEmail({ scope: 'partner', partnerId }, `partner@${domain}`),
      await bed.userWithEmail({ scope: 'system' }, `root@${domain}`),
    ];
    const users = async () => (await bed.sql<{ n: number }>(`select count(*)::int as n from users where lower(email) like $1`, [`%@${domain}`]))[0]!.n;
    const before = await users();
    for (const outsider of outsiders) {
      // Their own tenants have no single sign-on: discovery sends them to the password field…
      const res = await bed.t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/discover', payload: { email: outsider.email } });
      assert.deepEqual(res.json(), { sso: false });
      // …and this tenant's provider vouching for their address, in a sign-in started for another, signs no one in.
      const sub = bed.idp.addAccount({ email: outsider.email });
      await bed.assertFailed(await bed.callback(await bed.idp.signIn(await bed.discover(`newcomer-${unique()}@${domain}`), sub)), 'user_outside_tenant');
      assert.equal((await bed.sql(`select 1 from sessions where user_id = $1`, [outsider.id])).length, 0);
    }
    assert.equal(await users(), before, 'nobody provisioned');
    // Audited in the configured organization's chain, naming the address but no foreign user id.
    const audits = await bed.sql<{ actor_id: string | null; details: Record<string, unknown> }>(
      `select actor_id, details from audit_logs where org_id = $1 and action = 'user.login.failed'`, [orgId]);
    assert.equal(audits.length, outsiders.length);
    for (const a of audits) {
      assert.equal(a.actor_id, null);
      assert.equal(a.details.method, 'sso');
      assert.equal(a.details.reason, 'user_outside_tenant');
    }
  });

  it('fails an address outside the domains, unverified, unknown without JIT, or of a disabled user; nothing created', async () => {
    const { orgId, domain } = await bed.ssoOrg();
    const user = await bed.userWithEmail({ scope: 'organization', orgId }, `gina@${domain}`);
    const users = async () => (await bed.sql<{ n: number }>(`select count(*)::int as n from users where lower(email) like $1`, [`%@${domain}`]))[0]!.n;
    const before = await users();
    const start = () => bed.discover(user.email);

    await bed.assertFailed(await bed.callback(await bed.idp.signIn(await start(), bed.idp.addAccount({ email: `gina@elsewhere-${unique()}.test` }))), 'domain_not_allowed');
    await bed.assertFailed(await bed.callback(await bed.idp.signIn(await start(), bed.idp.addAccount({ email: user.email, emailVerified: false }))), 'email_unverified');
    await bed.assertFailed(await bed.callback(await bed.idp.signIn(await start(), bed.idp.addAccount({ email: `ghost@${domain}` }))), 'unknown_user');
    await bed.sql(`update users set disabled_at = now() where id = $1`, [user.id]);
    await bed.assertFailed(await bed.signIn(user.email, bed.idp.addAccount({ email: user.email })), 'user_disabled');
    assert.equal(await users(), before);
    const reasons = (await bed.sql<{ reason: string }>(
      `select details->>'reason' as reason from audit_logs where org_id = $1 and action = 'user.login.failed' and details->>'method' = 'sso' order by timestamp`, [orgId])).map((r) => r.reason);
    assert.deepEqual(reasons.sort(), ['domain_not_allowed', 'email_unverified', 'unknown_user', 'user_disabled']);
  });

  it('fails cleanly when the provider is down: at discovery (401 SSO_FAILED) and at the callback (nothing created)', async () => {
    const secret = `secret-down-${unique()}`;
    const down = await startOidcIdp({ clients: [{ clientId: 'client-down', clientSecret: secret, redirectUri: REDIRECT_URI }] });
    try {
      const { domain } = await bed.ssoOrg({ issuer: down.issuer, clientId: 'client-down', clientSecret: secret, jitProvisioning: true });
      const newcomer = `new-${unique()}@${domain}`;
      const back = await down.signIn(await bed.discover(newcomer), down.addAccount({ email: newcomer }));
      await down.stop();
      // Refused, or (a kept-alive connection) closed: either way the provider is gone.
      await bed.assertFailed(await bed.callback(back), 'idp_rejected', /connection refused|connection closed/);
      assert.equal((await bed.sql(`select 1 from users where lower(email) = lower($1)`, [newcomer])).length, 0);
      // Once its cached discovery document is stale, discovery itself reports the provider unreachable.
      await bed.travel(6 * 60_000, async () => {
        const res = await bed.t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/discover', payload: { email: newcomer } });
        assert.match(String(assertProblem(res, 401, 'SSO_FAILED').detail), /cannot be reached/);
      });
    } finally {
      await down.stop();
    }
  });

  it('answers sso: false for addresses no enabled configuration signs in', async () => {
    const { orgId, domain } = await bed.ssoOrg({ enabled: false });
    const member = await bed.userWithEmail({ scope: 'organization', orgId }, `off@${domain}`);
    for (const email of [member.email, `unknown@${domain}`, `who@nowhere-${unique()}.test`, 'not-an-address']) {
      const res = await bed.t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/discover', payload: { email } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { sso: false }, email);
    }
  });

  it('never shows a client secret in a response, a log line, the audit log or the stored configuration', async () => {
    const stored = await bed.sql<{ text: string }>(`select sso_config::text as text from organizations where sso_config is not null
                                                     union all select sso_config::text from partners where sso_config is not null`);
    const audit = await bed.sql<{ text: string }>(`select details::text as text from audit_logs`);
    const haystacks = { logs: bed.logLines.join('\n'), audit: audit.map((r) => r.text).join('\n'), stored: stored.map((r) => r.text).join('\n') };
    assert.ok(stored.length > 0 && bed.logLines.length > 0);
    for (const secret of Object.values(bed.secrets)) {
      for (const [where, text] of Object.entries(haystacks)) assert.ok(!text.includes(secret), `a client secret in the ${where}`);
    }
    const read = await as(bed.t.app, bed.admin)({ method: 'GET', url: `/api/v1/orgs/organizations?limit=100` });
    for (const secret of Object.values(bed.secrets)) assert.ok(!read.body.includes(secret));
  });
});
