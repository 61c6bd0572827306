// Writing a partner's or organization's ssoConfig: the secret sealed and never shown, the checks
// (schema, issuer rules, the provider's discovery document, an MFA-verified session), and one
// tenant per e-mail domain. On every backend: the migration's function and indexes run on both.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { backends } from '../../../test/support/app.js';
import { as, assertProblem, login, loginWithMfa } from '../../../test/support/clients.js';
import { createOrg, createPartner, createUser } from '../../../test/support/factory.js';
import { freePort } from '../../../test/support/free-port.js';
import { startSsoTestbed, unique, type SsoTestbed } from '../../../test/support/sso-testbed.js';
import { createSecretBox } from '../../secret-box.js';

for (const backend of backends()) {
  describe(`single sign-on settings on ${backend}`, () => {
    let bed: SsoTestbed;
    before(async () => {
      bed = await startSsoTestbed({ backend });
    });
    after(() => bed?.close());

    const config = (overrides: Record<string, unknown> = {}) => ({
      enabled: true, issuer: bed.idp.issuer, clientId: 'client-a', clientSecret: bed.secrets['client-a'], emailDomains: [`d-${unique()}.test`], defaultRole: 'technician', ...overrides,
    });
    const patchOrg = (orgId: string, ssoConfig: unknown, session = bed.admin) =>
      as(bed.t.app, session)({ method: 'PATCH', url: `/api/v1/orgs/organizations/${orgId}`, payload: { ssoConfig } });
    const stored = async (orgId: string) =>
      (await bed.sql<{ sso_config: Record<string, unknown> | null }>(`select sso_config from organizations where id = $1`, [orgId]))[0]!.sso_config;

    it('seals the client secret, never returns it, keeps it when omitted, and removes the configuration with null', async () => {
      const org = await createOrg(bed.t.db, (await createPartner(bed.t.db)).id);
      const domain = `Mixed-${unique()}.Test`;
      const res = await patchOrg(org.id, config({ emailDomains: [domain, domain.toLowerCase()], roleClaim: 'groups', roleMapping: { ops: 'admin' } }));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().ssoConfig, {
        enabled: true, issuer: bed.idp.issuer, clientId: 'client-a', clientSecretSet: true, emailDomains: [domain.toLowerCase()], defaultRole: 'technician',
        roleClaim: 'groups', roleMapping: { ops: 'admin' }, jitProvisioning: false, enforce: false, trustIdpMfa: false,
      });
      assert.ok(!res.body.includes(bed.secrets['client-a']));
      const sealed = (await stored(org.id))!.clientSecretSealed as string;
      assert.match(sealed, /^v1\./);
      assert.equal(createSecretBox(bed.t.config.encryptionKey, 'sso-client-secret').open(sealed), bed.secrets['client-a']);
      const read = await as(bed.t.app, bed.admin)({ method: 'GET', url: `/api/v1/orgs/organizations/${org.id}` });
      assert.deepEqual(read.json().ssoConfig, res.json().ssoConfig);

      // Without clientSecret the stored one stays (re-sealed never: the same ciphertext).
      const { clientSecret: _omitted, ...rest } = config({ emailDomains: [domain], defaultRole: 'readonly' });
      const kept = await patchOrg(org.id, rest);
      assert.equal(kept.json().ssoConfig.clientSecretSet, true);
      assert.equal(kept.json().ssoConfig.defaultRole, 'readonly');
      assert.equal((await stored(org.id))!.clientSecretSealed, sealed);
      // null: a public client.
      assert.equal((await patchOrg(org.id, { ...rest, clientSecret: null })).json().ssoConfig.clientSecretSet, false);
      const removed = await patchOrg(org.id, null);
      assert.equal(removed.json().ssoConfig, null);
      assert.equal(await stored(org.id), null);

      // The audit entries of those changes show the configuration as reads do.
      const audit = await bed.sql<{ text: string }>(`select details::text as text from audit_logs where resource_id = $1 and action = 'organization.update'`, [org.id]);
      assert.equal(audit.length, 4);
      for (const { text } of audit) assert.ok(!text.includes('clientSecretSealed') && !text.includes(bed.secrets['client-a']), text);

      // A partner's own configuration, written by a system admin.
      const partner = await createPartner(bed.t.db);
      const own = await as(bed.t.app, bed.admin)({ method: 'PATCH', url: `/api/v1/orgs/partners/${partner.id}`, payload: { ssoConfig: config() } });
      assert.equal(own.statusCode, 200, own.body);
      assert.equal(own.json().ssoConfig.clientSecretSet, true);
      assert.ok(!own.body.includes(bed.secrets['client-a']));
    });

    it('refuses a configuration with 400: the field that is wrong, or what failed at the provider', async () => {
      const org = await createOrg(bed.t.db, (await createPartner(bed.t.db)).id);
      const valid = config();
      assert.equal((await patchOrg(org.id, valid)).statusCode, 200);
      const invalid = async (ssoConfig: unknown, field: RegExp) => {
        const body = assertProblem(await patchOrg(org.id, ssoConfig), 400, 'VALIDATION_FAILED');
        assert.match(JSON.stringify(body.errors), field, JSON.stringify(body));
      };
      const { clientId: _missing, ...noClientId } = valid;
      await invalid(noClientId, /clientId/);
      await invalid({ ...valid, emailDomains: ['not a domain'] }, /emailDomains/);
      await invalid({ ...valid, emailDomains: [] }, /emailDomains/);
      await invalid({ ...valid, roleClaim: 'groups', roleMapping: { root: 'superadmin' } }, /roleMapping/);
      await invalid({ ...valid, roleClaim: 'groups', roleMapping: { root: 'system' } }, /roleMapping/);
      await invalid({ ...valid, roleMapping: { ops: 'admin' } }, /roleClaim/);
      await invalid({ ...valid, defaultRole: 'owner' }, /defaultRole/);
      await invalid({ ...valid, clientSecretSealed: 'v1.a.b.c' }, /clientSecretSealed|additional/);
      await invalid({ ...valid, issuer: 'http://idp.example.com' }, /issuer.*https/);
      await invalid({ ...valid, issuer: 'ftp://127.0.0.1/' }, /issuer/);
      await invalid({ ...valid, issuer: `${bed.idp.issuer}/.well-known/openid-configuration` }, /issuer/);
      await invalid({ ...valid, issuer: 'https://user:pw@idp.example.com' }, /issuer/);

      const unavailable = async (issuer: string, why: RegExp) => {
        const body = assertProblem(await patchOrg(org.id, { ...valid, issuer }), 400, 'SSO_CONFIG_INVALID');
        assert.match(String(body.detail), why);
      };
      await unavailable(`http://127.0.0.1:${await freePort()}`, /connection refused/);
      await unavailable(`https://127.0.0.1:${await freePort()}`, /connection refused/);
      await unavailable(`${bed.idp.issuer}/tenant`, /404/); // no such discovery document
      const notJson = http.createServer((_req, res) => res.end('<html>'));
      const port = await freePort();
      await new Promise<void>((resolve) => notJson.listen(port, '127.0.0.1', resolve));
      try {
        await unavailable(`http://127.0.0.1:${port}`, /content-type|JSON/i);
      } finally {
        notJson.close();
      }
      // The configuration as it was before the refused writes.
      assert.equal((await as(bed.t.app, bed.admin)({ method: 'GET', url: `/api/v1/orgs/organizations/${org.id}` })).json().ssoConfig.emailDomains[0], valid.emailDomains[0]);

      // Setting who signs in, and as what, takes an MFA-verified session, like creating users.
      const passwordOnly = await login(bed.t.app, await createUser(bed.t.db, { scope: 'system' }));
      assertProblem(await patchOrg(org.id, valid, passwordOnly), 403, 'MFA_REQUIRED');
      assertProblem(await patchOrg(org.id, null, passwordOnly), 403, 'MFA_REQUIRED');
      const partnerTech = await login(bed.t.app, await createUser(bed.t.db, { scope: 'partner', partnerId: org.partnerId, role: 'technician' }));
      assertProblem(await as(bed.t.app, partnerTech)({ method: 'PATCH', url: '/api/v1/orgs/partners/me', payload: { ssoConfig: valid } }), 403, 'PERMISSION_DENIED');
    });

    it('tries a provider before saving: what its discovery document names, or what failed; never stored', async () => {
      const test = (payload: Record<string, unknown>, session = bed.admin) => as(bed.t.app, session)({ method: 'POST', url: '/api/v1/auth/sso/test', payload });
      const ok = await test({ issuer: bed.idp.issuer, clientId: 'client-a' });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().issuer, bed.idp.issuer);
      assert.match(ok.json().authorizationEndpoint, /^http:\/\/127\.0\.0\.1:\d+\//);
      assert.ok(ok.json().tokenEndpoint && ok.json().jwksUri);
      assert.match(String(assertProblem(await test({ issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'x' }), 400, 'SSO_CONFIG_INVALID').detail), /connection refused/);
      assert.match(JSON.stringify(assertProblem(await test({ issuer: 'http://idp.example.com', clientId: 'x' }), 400, 'VALIDATION_FAILED').errors), /issuer/);
      assertProblem(await test({ issuer: bed.idp.issuer }), 400, 'VALIDATION_FAILED');
      // As strong as writing a configuration: the permission, then an MFA-verified session.
      assertProblem(await test({ issuer: bed.idp.issuer, clientId: 'x' }, await login(bed.t.app, await createUser(bed.t.db, { scope: 'system' }))), 403, 'MFA_REQUIRED');
      const org = await createOrg(bed.t.db, (await createPartner(bed.t.db)).id);
      const readonly = await loginWithMfa(bed.t.app, await createUser(bed.t.db, { scope: 'organization', orgId: org.id, role: 'technician' }), bed.t.clock);
      assertProblem(await test({ issuer: bed.idp.issuer, clientId: 'x' }, readonly), 403, 'PERMISSION_DENIED');
      assertProblem(await bed.t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/test', payload: { issuer: bed.idp.issuer, clientId: 'x' } }), 401, 'UNAUTHENTICATED');
    });

    it('gives an e-mail domain to one enabled configuration: a second tenant claiming it is 409', async () => {
      const partner = await createPartner(bed.t.db);
      const [a, b, c] = [await createOrg(bed.t.db, partner.id), await createOrg(bed.t.db, partner.id), await createOrg(bed.t.db, (await createPartner(bed.t.db)).id)];
      const domain = `shared-${unique()}.test`;
      assert.equal((await patchOrg(a.id, config({ emailDomains: [domain] }))).statusCode, 200);
      assert.equal((await patchOrg(a.id, config({ emailDomains: [domain, `more-${unique()}.test`] }))).statusCode, 200, 'its own claim is no conflict');
      const conflict = assertProblem(await patchOrg(c.id, config({ emailDomains: [`free-${unique()}.test`, domain.toUpperCase()] })), 409, 'CONFLICT');
      assert.match(String(conflict.detail), new RegExp(domain.replace(/\./g, '\\.')));
      assertProblem(await patchOrg(b.id, config({ emailDomains: [domain] })), 409, 'CONFLICT');
      assertProblem(await as(bed.t.app, bed.admin)({ method: 'PATCH', url: `/api/v1/orgs/partners/${partner.id}`, payload: { ssoConfig: config({ emailDomains: [domain] }) } }), 409, 'CONFLICT');
      // A disabled configuration claims nothing; disabling (or deleting) one frees its domains.
      assert.equal((await patchOrg(c.id, config({ enabled: false, emailDomains: [domain] }))).statusCode, 200);
      assertProblem(await patchOrg(c.id, config({ emailDomains: [domain] })), 409, 'CONFLICT');
      assert.equal((await as(bed.t.app, bed.admin)({ method: 'DELETE', url: `/api/v1/orgs/organizations/${a.id}` })).statusCode, 200);
      assert.equal((await patchOrg(c.id, config({ emailDomains: [domain] }))).statusCode, 200);

      // A partner's admin, in its own scope, still learns that another partner's organization holds the domain.
      const partnerAdmin = await loginWithMfa(bed.t.app, await createUser(bed.t.db, { scope: 'partner', partnerId: partner.id }), bed.t.clock);
      assertProblem(await as(bed.t.app, partnerAdmin)({ method: 'PATCH', url: '/api/v1/orgs/partners/me', payload: { ssoConfig: config({ emailDomains: [domain] }) } }), 409, 'CONFLICT');
      assert.equal((await as(bed.t.app, partnerAdmin)({ method: 'PATCH', url: '/api/v1/orgs/partners/me', payload: { ssoConfig: config() } })).statusCode, 200);

      // Two tenants claiming a new domain at the same moment: exactly one gets it.
      const race = `race-${unique()}.test`;
      const outcomes = await Promise.all([patchOrg(b.id, config({ emailDomains: [race] })), patchOrg(c.id, config({ emailDomains: [race] }))]);
      assert.deepEqual(outcomes.map((r) => r.statusCode).sort(), [200, 409]);
    });
  });
}
