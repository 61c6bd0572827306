// What a single sign-on decides beyond "who": just-in-time provisioning and its roles (never above
// the tenant's admin), enforce (no password sign-in), and trustIdpMfa, with a real OpenID Provider.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, assertProblem, login, loginWithMfa } from '../../../test/support/clients.js';
import { createOrg, createPartner, createUser, TEST_PASSWORD } from '../../../test/support/factory.js';
import { startSsoTestbed, unique, type SsoTestbed } from '../../../test/support/sso-testbed.js';
import { totpCode } from '../totp.js';

describe('single sign-on: provisioning, enforce, trusted MFA', () => {
  let bed: SsoTestbed;
  before(async () => {
    bed = await startSsoTestbed();
  });
  after(() => bed?.close());

  const passwordLogin = (email: string, password = TEST_PASSWORD) =>
    bed.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
  const signedIn = async (location: string) => {
    const res = await bed.exchange(bed.codeOf(location));
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const mapping = { roleClaim: 'groups', roleMapping: { 'rmm-admins': 'admin', 'rmm-techs': 'technician' }, defaultRole: 'readonly', jitProvisioning: true };

  it('provisions an organization’s unknown user with the mapped role, never above admin, audited as JIT', async () => {
    const { orgId, domain } = await bed.ssoOrg(mapping);
    const cases: [string[] | undefined, string][] = [
      [['rmm-techs', 'rmm-admins', 'root'], 'admin'],
      [['rmm-techs'], 'technician'],
      [['root', 'system', 'superadmin', 'admin'], 'readonly'], // unmapped values, even role names, give the default
      [undefined, 'readonly'],
    ];
    for (const [groups, role] of cases) {
      const email = `new-${unique()}@${domain}`;
      const sub = bed.idp.addAccount({ email, name: 'New Person', ...(groups ? { groups } : {}) });
      const body = await signedIn(await bed.signIn(email, sub));
      assert.deepEqual([body.user.scope, body.user.orgId, body.user.role, body.user.email, body.user.name], ['organization', orgId, role, email, 'New Person']);
      const [audit] = await bed.sql<{ org_id: string; actor_id: string; details: Record<string, unknown> }>(
        `select org_id, actor_id, details from audit_logs where action = 'user.create' and resource_id = $1`, [body.user.id]);
      assert.equal(audit?.org_id, orgId);
      assert.equal(audit?.actor_id, body.user.id);
      assert.equal(audit?.details.jit, true);
      assert.equal(audit?.details.method, 'sso');
      // A provisioned user has no password: password sign-in fails as for anyone else.
      assertProblem(await passwordLogin(email), 401, 'UNAUTHENTICATED');
    }
    // Known now: signing in again creates nothing, and the claim no longer changes the role.
    const email = `again-${unique()}@${domain}`;
    const sub = bed.idp.addAccount({ email, groups: ['rmm-techs'] });
    const first = await signedIn(await bed.signIn(email, sub));
    const second = await signedIn(await bed.signIn(email, sub));
    assert.equal(second.user.id, first.user.id);
    assert.equal((await bed.sql(`select 1 from audit_logs where action = 'user.create' and resource_id = $1`, [first.user.id])).length, 1);
  });

  it('provisions a partner’s unknown user at partner scope with no organization access', async () => {
    const partnerId = (await createPartner(bed.t.db)).id;
    await createOrg(bed.t.db, partnerId);
    const partnerAdmin = await loginWithMfa(bed.t.app, await createUser(bed.t.db, { scope: 'partner', partnerId }), bed.t.clock);
    const domain = `partner-${unique()}.test`;
    const res = await as(bed.t.app, partnerAdmin)({
      method: 'PATCH', url: '/api/v1/orgs/partners/me',
      payload: { ssoConfig: { enabled: true, issuer: bed.idp.issuer, clientId: 'client-a', clientSecret: bed.secrets['client-a'], emailDomains: [domain], ...mapping } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().ssoConfig.clientSecretSet, true);
    const email = `tech@${domain}`;
    const body = await signedIn(await bed.signIn(email, bed.idp.addAccount({ email, groups: ['rmm-admins'] })));
    assert.deepEqual([body.user.scope, body.user.partnerId, body.user.orgId, body.user.role], ['partner', partnerId, null, 'admin']);
    const [row] = await bed.sql<{ org_access: string }>(`select org_access from users where id = $1`, [body.user.id]);
    assert.equal(row?.org_access, 'none');
    assert.deepEqual((await as(bed.t.app, body)({ method: 'GET', url: '/api/v1/orgs/' })).json().data, []);
  });

  it('enforce refuses password sign-in (SSO_REQUIRED) for the users and domains it covers, without counting it', async () => {
    const { partnerId, orgId, domain } = await bed.ssoOrg({ enforce: true });
    const member = await bed.userWithEmail({ scope: 'organization', orgId }, `member@${domain}`);
    const outsideDomains = await bed.userWithEmail({ scope: 'organization', orgId }, `contractor-${unique()}@elsewhere.test`);
    const partnerUser = await bed.userWithEmail({ scope: 'partner', partnerId }, `msp@${domain}`);

    const refused = assertProblem(await passwordLogin(member.email), 401, 'SSO_REQUIRED');
    assertProblem(await passwordLogin(member.email, 'wrong password'), 401, 'SSO_REQUIRED');
    // An unknown address of the domain hears the same: the answer tells nothing of who has an account.
    assert.equal(assertProblem(await passwordLogin(`nobody@${domain}`), 401, 'SSO_REQUIRED').detail, refused.detail);
    // Users it cannot sign in keep their passwords: outside its domains, or not the organization's.
    await login(bed.t.app, outsideDomains);
    await login(bed.t.app, partnerUser);
    // The way in is single sign-on.
    assert.equal((await signedIn(await bed.signIn(member.email, bed.idp.addAccount({ email: member.email })))).user.id, member.id);

    // Refusals are not failed attempts: twelve of them, then enforce off, and the password works (no 429).
    for (let i = 0; i < 12; i++) assertProblem(await passwordLogin(member.email, `guess-${i}-password`), 401, 'SSO_REQUIRED');
    const off = await as(bed.t.app, bed.admin)({
      method: 'PATCH', url: `/api/v1/orgs/organizations/${orgId}`,
      payload: { ssoConfig: { enabled: true, issuer: bed.idp.issuer, clientId: 'client-a', emailDomains: [domain], defaultRole: 'readonly', enforce: false } },
    });
    assert.equal(off.statusCode, 200, off.body);
    await login(bed.t.app, member);
  });

  it('trusts the provider’s MFA only with trustIdpMfa and "mfa" in amr; TOTP users are asked for a code otherwise', async () => {
    const trusting = await bed.ssoOrg({ trustIdpMfa: true });
    const wary = await bed.ssoOrg();
    const totpUser = async (orgId: string, domain: string) => {
      const user = await bed.userWithEmail({ scope: 'organization', orgId }, `totp-${unique()}@${domain}`);
      const { totpSecret } = await loginWithMfa(bed.t.app, user, bed.t.clock);
      return { ...user, totpSecret: totpSecret!, sub: bed.idp.addAccount({ email: user.email }) };
    };
    const plainUser = async (orgId: string, domain: string) => {
      const user = await bed.userWithEmail({ scope: 'organization', orgId }, `plain-${unique()}@${domain}`);
      return { ...user, sub: bed.idp.addAccount({ email: user.email }) };
    };

    const a = await totpUser(trusting.orgId, trusting.domain);
    const verified = await signedIn(await bed.signIn(a.email, a.sub, ['pwd', 'mfa']));
    assert.equal(verified.user.mfaVerified, true);
    assert.equal((await as(bed.t.app, verified)({ method: 'GET', url: '/api/v1/auth/me' })).json().mfaVerified, true);
    const [session] = await bed.sql<{ mfa_verified: boolean; sso: boolean }>(`select mfa_verified, sso from sessions where user_id = $1 and sso`, [a.id]);
    assert.deepEqual(session, { mfa_verified: true, sso: true });

    // Without "mfa" in amr: the TOTP challenge, which the user's code then completes.
    const challenged = await signedIn(await bed.signIn(a.email, a.sub, ['pwd']));
    assert.deepEqual(Object.keys(challenged).sort(), ['mfaRequired', 'mfaToken']);
    const code = await bed.travel(30_000, async () => totpCode(a.totpSecret, bed.t.clock.now()));
    const verify = await bed.travel(30_000, () => bed.t.app.inject({ method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: challenged.mfaToken, code } }));
    assert.equal(verify.statusCode, 200, verify.body);
    assert.equal(verify.json().user.mfaVerified, true);
    // The session that step opened is still a single sign-on one, and audited as such.
    const sessions = await as(bed.t.app, verify.json())({ method: 'GET', url: '/api/v1/auth/sessions' });
    assert.deepEqual(sessions.json().data.find((s: { current: boolean }) => s.current), { ...sessions.json().data.find((s: { current: boolean }) => s.current), sso: true, mfaVerified: true });
    const [login] = await bed.sql<{ method: string | null }>(
      `select details->>'method' as method from audit_logs where actor_id = $1 and action = 'user.login' order by timestamp desc limit 1`, [a.id]);
    assert.equal(login!.method, 'sso');

    // A tenant that does not trust its provider's MFA: "mfa" in amr changes nothing.
    const b = await totpUser(wary.orgId, wary.domain);
    assert.equal((await signedIn(await bed.signIn(b.email, b.sub, ['pwd', 'mfa']))).mfaRequired, true);
    const c = await plainUser(wary.orgId, wary.domain);
    assert.equal((await signedIn(await bed.signIn(c.email, c.sub, ['pwd', 'mfa']))).user.mfaVerified, false);
    // A user without TOTP, through a trusting tenant: MFA-verified only with "mfa" in amr.
    const d = await plainUser(trusting.orgId, trusting.domain);
    assert.equal((await signedIn(await bed.signIn(d.email, d.sub, ['pwd', 'mfa']))).user.mfaVerified, true);
    assert.equal((await signedIn(await bed.signIn(d.email, d.sub))).user.mfaVerified, false);
  });
});
