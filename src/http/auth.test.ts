// The route guard's rules, through HTTP on a minimal app whose authenticators return crafted
// callers: credential precedence, partner guard, suspended organizations, scope levels,
// permissions (users vs API keys) and MFA.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { AppError } from '../errors.js';
import { SYSTEM_SCOPE } from '../db/tenant-scope.js';
import { AGENT_BODY_LIMIT, agentOf, installAuth, callerOf, type AgentCaller, type Caller, type RouteAuth } from './auth.js';
import { installErrorHandling } from './error-handler.js';

function caller(overrides: Partial<Caller> = {}): Caller {
  return {
    kind: 'user',
    id: '00000000-0000-4000-8000-000000000001',
    userId: '00000000-0000-4000-8000-000000000001',
    email: 'u@example.test',
    name: 'U',
    scope: 'partner',
    partnerId: '00000000-0000-4000-8000-0000000000aa',
    orgId: null,
    role: 'admin',
    permissions: new Set(['organizations:read']),
    mfaEnabled: false,
    mfaVerified: false,
    accessibleOrgIds: [],
    canAccessOrg: () => false,
    partnerStatus: 'active',
    orgStatus: null,
    sessionId: null,
    tenant: SYSTEM_SCOPE,
    ...overrides,
  };
}

async function guardedApp(auth: RouteAuth, jwtCaller: Caller, keyCaller?: Caller) {
  const app = Fastify();
  installErrorHandling(app);
  installAuth(app, {
    jwt: async (token) => {
      if (token !== 'good-jwt') throw new AppError('UNAUTHENTICATED', 'bad token');
      return jwtCaller;
    },
    apiKey: {
      authenticate: async (key) => {
        if (key !== 'svc_good' || !keyCaller) throw new AppError('API_KEY_INVALID', 'bad key');
        return keyCaller;
      },
      admit: async () => true,
      describe: async () => {},
    },
  });
  const handler = async (request: Parameters<typeof callerOf>[0]) => ({ kind: callerOf(request).kind });
  app.get('/r', { config: { auth } }, handler);
  app.post('/r', { config: { auth } }, handler);
  await app.ready();
  return app;
}

describe('route guard', () => {
  it('answers 401 with WWW-Authenticate when no credential is sent', async () => {
    const app = await guardedApp({ via: ['jwt'] }, caller());
    const res = await app.inject({ method: 'GET', url: '/r' });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'UNAUTHENTICATED');
    assert.equal(res.headers['www-authenticate'], 'Bearer');
  });

  it('ignores X-API-Key on a JWT-only route (no credential there)', async () => {
    const app = await guardedApp({ via: ['jwt'] }, caller(), caller({ kind: 'api_key' }));
    const res = await app.inject({ method: 'GET', url: '/r', headers: { 'x-api-key': 'svc_good' } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'UNAUTHENTICATED');
  });

  it('lets the API key win over a JWT when both are sent', async () => {
    const app = await guardedApp({ via: ['jwt', 'api_key'] }, caller(), caller({ kind: 'api_key' }));
    const ok = await app.inject({ method: 'GET', url: '/r', headers: { 'x-api-key': 'svc_good', authorization: 'Bearer good-jwt' } });
    assert.equal(ok.json().kind, 'api_key');
    const badKey = await app.inject({ method: 'GET', url: '/r', headers: { 'x-api-key': 'svc_bad', authorization: 'Bearer good-jwt' } });
    assert.equal(badKey.json().code, 'API_KEY_INVALID');
  });

  it('rejects malformed Authorization headers', async () => {
    const app = await guardedApp({ via: ['jwt'] }, caller());
    for (const authorization of ['good-jwt', 'Basic good-jwt', 'Bearer', 'Bearer a b']) {
      const res = await app.inject({ method: 'GET', url: '/r', headers: { authorization } });
      assert.equal(res.statusCode, 401, authorization);
    }
  });

  it('blocks callers whose partner is not active, but not system scope', async () => {
    for (const status of ['pending', 'suspended', 'churned', 'deleted']) {
      const app = await guardedApp({ via: ['jwt'] }, caller({ partnerStatus: status }));
      const res = await app.inject({ method: 'GET', url: '/r', headers: { authorization: 'Bearer good-jwt' } });
      assert.equal(res.statusCode, 403, status);
      assert.equal(res.json().code, 'PARTNER_INACTIVE');
    }
    const app = await guardedApp({ via: ['jwt'] }, caller({ scope: 'system', partnerId: null, partnerStatus: null }));
    assert.equal((await app.inject({ method: 'GET', url: '/r', headers: { authorization: 'Bearer good-jwt' } })).statusCode, 200);
  });

  it('lets organization users of a suspended organization read but not write', async () => {
    const suspended = caller({ scope: 'organization', orgStatus: 'suspended' });
    const app = await guardedApp({ via: ['jwt'] }, suspended);
    const headers = { authorization: 'Bearer good-jwt' };
    assert.equal((await app.inject({ method: 'GET', url: '/r', headers })).statusCode, 200);
    const write = await app.inject({ method: 'POST', url: '/r', headers });
    assert.equal(write.statusCode, 403);
    assert.equal(write.json().code, 'ORG_SUSPENDED');
    const allowed = await guardedApp({ via: ['jwt'], allowSuspendedOrgWrites: true }, suspended);
    assert.equal((await allowed.inject({ method: 'POST', url: '/r', headers })).statusCode, 200);
  });

  it('admits only the scope levels a route names', async () => {
    const app = await guardedApp({ via: ['jwt'], scopes: ['system'] }, caller({ scope: 'organization' }));
    const res = await app.inject({ method: 'GET', url: '/r', headers: { authorization: 'Bearer good-jwt' } });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'PERMISSION_DENIED');
  });

  it('checks the role permission for users and the scope for API keys (any one, or *)', async () => {
    const headers = { authorization: 'Bearer good-jwt' };
    const noPerm = await guardedApp({ via: ['jwt'], permission: 'users:write' }, caller());
    assert.equal((await noPerm.inject({ method: 'GET', url: '/r', headers })).json().code, 'PERMISSION_DENIED');

    const key = (scopes: string[]) => caller({ kind: 'api_key', permissions: new Set(scopes) });
    const keyHeaders = { 'x-api-key': 'svc_good' };
    const denied = await guardedApp({ via: ['api_key'], permission: 'devices:read' }, caller(), key(['audit:read']));
    const res = await denied.inject({ method: 'GET', url: '/r', headers: keyHeaders });
    assert.equal(res.json().code, 'API_KEY_SCOPE_DENIED');
    assert.equal(res.json().detail, 'API key does not have required permissions');
    const star = await guardedApp({ via: ['api_key'], permission: 'devices:read' }, caller(), key(['*']));
    assert.equal((await star.inject({ method: 'GET', url: '/r', headers: keyHeaders })).statusCode, 200);
    const empty = await guardedApp({ via: ['api_key'] }, caller(), key([]));
    assert.equal((await empty.inject({ method: 'GET', url: '/r', headers: keyHeaders })).statusCode, 200);
  });

  it('requires an MFA-verified session where the route says so', async () => {
    const headers = { authorization: 'Bearer good-jwt' };
    const plain = await guardedApp({ via: ['jwt'], mfa: true }, caller({ mfaEnabled: true }));
    const res = await plain.inject({ method: 'POST', url: '/r', headers });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'MFA_REQUIRED');
    const verified = await guardedApp({ via: ['jwt'], mfa: true }, caller({ mfaEnabled: true, mfaVerified: true }));
    assert.equal((await verified.inject({ method: 'POST', url: '/r', headers })).statusCode, 200);
  });
});

describe('the agent credential', () => {
  const device: AgentCaller = {
    deviceId: '00000000-0000-4000-8000-0000000000d1',
    agentId: 'a'.repeat(64),
    orgId: '00000000-0000-4000-8000-0000000000c1',
    siteId: '00000000-0000-4000-8000-0000000000e1',
    hostname: 'ws-01',
    lastSourceIp: null,
    tenant: SYSTEM_SCOPE,
  };

  async function agentApp() {
    const seen: { token: string | null; agentId: string }[] = [];
    const app = Fastify();
    installErrorHandling(app);
    installAuth(app, {
      jwt: async () => caller(),
      agent: async (token, agentId) => {
        seen.push({ token, agentId });
        if (agentId !== device.agentId) throw new AppError('NOT_FOUND', 'Device not found');
        if (token !== 'agent-token') throw new AppError('UNAUTHENTICATED', 'Agent token is invalid');
        return device;
      },
    });
    app.post('/agents/:id/ping', { config: { auth: { via: ['agent'] } } }, async (request) => ({ deviceId: agentOf(request).deviceId, caller: request.caller }));
    app.post('/jwt', { config: { auth: { via: ['jwt'] } } }, async () => ({ ok: true }));
    await app.ready();
    return { app, seen };
  }

  it('hands the bearer token and the :id to the authenticator, and the device to the route', async () => {
    const { app, seen } = await agentApp();
    const ok = await app.inject({ method: 'POST', url: `/agents/${device.agentId}/ping`, headers: { authorization: 'Bearer agent-token' } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { deviceId: device.deviceId, caller: null });
    assert.deepEqual(seen.at(-1), { token: 'agent-token', agentId: device.agentId });
    const unknown = await app.inject({ method: 'POST', url: `/agents/${'b'.repeat(64)}/ping`, headers: { authorization: 'Bearer agent-token' } });
    assert.equal(unknown.statusCode, 404);
    const missing = await app.inject({ method: 'POST', url: `/agents/${device.agentId}/ping` });
    assert.equal(missing.statusCode, 401);
    assert.equal(seen.at(-1)!.token, null);
  });

  it('checks the agent before the body: a stranger learns nothing from validation', async () => {
    const { app } = await agentApp();
    const res = await app.inject({ method: 'POST', url: `/agents/${device.agentId}/ping`, headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, payload: '{not json' });
    assert.equal(res.statusCode, 401);
  });

  it('takes agent bodies up to 5 MiB while other routes keep the default', async () => {
    const { app } = await agentApp();
    const big = JSON.stringify({ blob: 'x'.repeat(2 * 1024 * 1024) });
    const agentRes = await app.inject({ method: 'POST', url: `/agents/${device.agentId}/ping`, headers: { authorization: 'Bearer agent-token', 'content-type': 'application/json' }, payload: big });
    assert.equal(agentRes.statusCode, 200);
    assert.ok(big.length < AGENT_BODY_LIMIT);
    const userRes = await app.inject({ method: 'POST', url: '/jwt', headers: { authorization: 'Bearer good-jwt', 'content-type': 'application/json' }, payload: big });
    assert.equal(userRes.statusCode, 413);
  });

  it('refuses to register an agent route mixed with other credentials, or without an authenticator', async () => {
    const mixed = Fastify();
    installAuth(mixed, { jwt: async () => caller(), agent: async () => device });
    assert.throws(() => mixed.get('/x/:id', { config: { auth: { via: ['agent', 'jwt'] } } }, async () => ({})), /agent credential only/);
    const none = Fastify();
    installAuth(none, { jwt: async () => caller() });
    assert.throws(() => none.get('/y/:id', { config: { auth: { via: ['agent'] } } }, async () => ({})), /agent authenticator/);
  });
});
