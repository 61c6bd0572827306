// The pure rules of a single sign-on configuration: issuer addresses, the stored form and what
// reads show of it, roles from claims (never above admin), MFA from amr.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allowsEmail, emailDomainOf, idpAssertedMfa, isLoopbackHost, issuerProblem, jitRole, nameFromClaims, ssoConfigView, storedSsoConfig, toStoredSsoConfig,
  type StoredSsoConfig,
} from './sso-config.js';
import type { SsoConfigInput } from './sso.schemas.js';

const input: SsoConfigInput = { enabled: true, issuer: 'https://login.example.com/tenant/v2.0', clientId: 'app', emailDomains: ['Example.COM', 'example.com', 'b.example'], defaultRole: 'readonly' };
const seal = (secret: string) => `sealed(${secret})`;

describe('single sign-on configuration rules', () => {
  it('allows https issuers, and http only on loopback addresses', () => {
    for (const ok of ['https://idp.example.com', 'https://10.0.0.5:8443/realms/msp', 'https://192.168.1.10', 'http://127.0.0.1:9000', 'http://localhost:8080/realms/x', 'http://[::1]:9000', 'http://127.10.0.1']) {
      assert.equal(issuerProblem(ok), null, ok);
    }
    for (const bad of ['http://idp.example.com', 'http://10.0.0.5', 'http://[::2]', 'ftp://127.0.0.1', 'javascript:alert(1)', 'not a url', 'https://u:p@idp.example.com',
      'https://idp.example.com/?tenant=1', 'https://idp.example.com/#x', 'https://idp.example.com/.well-known/openid-configuration', 'http://localhost.example.com']) {
      assert.notEqual(issuerProblem(bad), null, bad);
    }
    assert.equal(isLoopbackHost('[::ffff:127.0.0.1]'), true);
    assert.equal(isLoopbackHost('LOCALHOST.'), true);
    assert.equal(isLoopbackHost('128.0.0.1'), false);
  });

  it('stores domains lowercased once, seals a new secret, keeps an omitted one, drops a null one', () => {
    const first = toStoredSsoConfig({ ...input, clientSecret: 's3cret' }, null, seal);
    assert.deepEqual(first, {
      enabled: true, issuer: input.issuer, clientId: 'app', clientSecretSealed: 'sealed(s3cret)', emailDomains: ['example.com', 'b.example'], defaultRole: 'readonly',
      roleClaim: null, roleMapping: {}, jitProvisioning: false, enforce: false, trustIdpMfa: false,
    });
    assert.equal(toStoredSsoConfig(input, first, seal).clientSecretSealed, 'sealed(s3cret)');
    assert.equal(toStoredSsoConfig(input, null, seal).clientSecretSealed, null);
    assert.equal(toStoredSsoConfig({ ...input, clientSecret: null }, first, seal).clientSecretSealed, null);
    assert.equal(toStoredSsoConfig({ ...input, clientSecret: 'next' }, first, seal).clientSecretSealed, 'sealed(next)');
  });

  it('shows everything but the secret, and reads free JSON from before 0017 as no configuration', () => {
    const stored = toStoredSsoConfig({ ...input, clientSecret: 's3cret', enforce: true }, null, seal);
    const view = ssoConfigView(stored)!;
    assert.equal(view.clientSecretSet, true);
    assert.equal(view.enforce, true);
    assert.ok(!JSON.stringify(view).includes('s3cret') && !('clientSecretSealed' in view));
    assert.equal(ssoConfigView({ ...stored, clientSecretSealed: null })!.clientSecretSet, false);
    for (const legacy of [null, {}, { provider: 'okta', clientSecret: 'plain' }, { ...stored, defaultRole: 'owner' }, 'text']) {
      assert.equal(ssoConfigView(legacy), null);
      assert.equal(storedSsoConfig(legacy), null);
    }
  });

  it('maps claim values to the highest mapped role, never above admin, else the default role', () => {
    const config: StoredSsoConfig = { ...toStoredSsoConfig(input, null, seal), roleClaim: 'groups', roleMapping: { ops: 'admin', techs: 'technician', viewers: 'readonly' }, defaultRole: 'technician' };
    assert.equal(jitRole(config, { groups: ['viewers', 'ops', 'techs'] }), 'admin');
    assert.equal(jitRole(config, { groups: 'viewers' }), 'readonly');
    assert.equal(jitRole(config, { groups: ['system', 'superadmin', 'admin'] }), 'technician');
    assert.equal(jitRole(config, { groups: [{ ops: true }, 42, null] }), 'technician');
    assert.equal(jitRole(config, {}), 'technician');
    // Inherited names are not mapping entries.
    assert.equal(jitRole({ ...config, roleMapping: {} }, { groups: ['constructor', '__proto__', 'toString'] }), 'technician');
    // A stored mapping to something that is not a role (never written through the API) gives no role.
    assert.equal(jitRole({ ...config, roleMapping: { ops: 'system' as never } }, { groups: ['ops'] }), 'technician');
    assert.equal(jitRole({ ...config, roleClaim: null }, { groups: ['ops'] }), 'technician');
  });

  it('reads MFA, e-mail domains and names from claims', () => {
    assert.equal(idpAssertedMfa({ amr: ['pwd', 'mfa'] }), true);
    for (const amr of [['pwd'], 'mfa', undefined, [['mfa']]]) assert.equal(idpAssertedMfa({ amr }), false);
    assert.equal(emailDomainOf('Alice@Example.COM'), 'example.com');
    for (const bad of ['alice', '@example.com', 'alice@']) assert.equal(emailDomainOf(bad), null);
    const config = toStoredSsoConfig(input, null, seal);
    assert.equal(allowsEmail(config, 'x@EXAMPLE.com'), true);
    assert.equal(allowsEmail(config, 'x@sub.example.com'), false);
    assert.equal(allowsEmail(config, 'x@example.com.evil.test'), false);
    assert.equal(nameFromClaims({ given_name: 'Ada', family_name: 'Lovelace' }, 'ada@x.test'), 'Ada Lovelace');
    assert.equal(nameFromClaims({ name: '  ' }, 'ada@x.test'), 'ada@x.test');
  });
});
