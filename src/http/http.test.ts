// The HTTP foundation: problem+json for every failure (ours and Fastify's), request ids, health,
// OpenAPI, a database that goes away, the client-IP rule, pagination maths and log redaction.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import Fastify from 'fastify';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createUser } from '../../test/support/factory.js';
import { as, assertProblem, login, loginWithMfa } from '../../test/support/clients.js';
import { clientIp } from './request-meta.js';
import { installErrorHandling } from './error-handler.js';
import { pageOf, paginated } from './pagination.js';
import { checkJsonBody, MAX_JSON_DEPTH } from './validation.js';

describe('HTTP foundation', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('answers unknown routes with a problem and a request id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nowhere?x=1' });
    const body = assertProblem(res, 404, 'NOT_FOUND');
    assert.equal(body.detail, 'Route GET /api/v1/nowhere not found');
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const echoed = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123.abc' } });
    assert.equal(echoed.headers['x-request-id'], 'trace-123.abc');
    const replaced = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\u0001' } });
    assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('turns malformed, oversized and mistyped bodies into 4xx problems', async () => {
    const login = (payload: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
      t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload, headers });
    assert.match(String(assertProblem(await login('{"email": '), 400, 'VALIDATION_FAILED').detail), /not valid JSON/);
    assertProblem(await login('{"__proto__": {"x": 1}, "email": "a", "password": "b"}'), 400, 'VALIDATION_FAILED');
    assertProblem(await login(JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(1024 * 1024) })), 413, 'PAYLOAD_TOO_LARGE');
    assertProblem(await login('email=a', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertProblem(await login('[]'), 400, 'VALIDATION_FAILED');
    const typed = assertProblem(await login(JSON.stringify({ email: 1, password: 'x' })), 400, 'VALIDATION_FAILED');
    assert.deepEqual(typed.errors, [{ path: 'body.email', message: 'must be string' }]);
  });

  it('answers what the HTTP parser refuses in problem details, then closes the connection', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    /** Sends raw bytes and reads everything until the server closes the connection. */
    const raw = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
        let answer = '';
        socket.setEncoding('utf8').on('data', (chunk) => (answer += chunk)).on('close', () => resolve(answer)).on('error', reject);
      });
    const parse = (answer: string) => {
      const [head, body] = answer.split('\r\n\r\n');
      const [statusLine, ...lines] = head!.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body!) as Record<string, unknown> };
    };
    const malformed = parse(await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n'));
    assert.equal(malformed.status, 400);
    assert.equal(malformed.headers['content-type'], 'application/problem+json');
    assert.equal(malformed.headers.connection, 'close');
    assert.match(malformed.headers['x-request-id']!, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...malformed.body, requestId: undefined },
      { type: 'about:blank', title: 'Bad Request', status: 400, code: 'VALIDATION_FAILED', detail: 'The request is not valid HTTP/1.1', requestId: undefined, errors: [{ path: 'request', message: 'The request is not valid HTTP/1.1' }] },
    );
    assert.equal(malformed.body.requestId, malformed.headers['x-request-id']);
    const oversized = parse(await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(oversized.status, 431);
    assert.equal(oversized.body.code, 'HEADERS_TOO_LARGE');
    assert.equal(oversized.headers['content-type'], 'application/problem+json');
    // The server still answers well-formed requests on new connections.
    assert.equal((await fetch(`${address}/healthz`)).status, 200);
  });

  it('serves health, readiness and the OpenAPI document', async () => {
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready' });
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(doc.openapi, '3.1.0');
    for (const path of ['/api/v1/auth/login', '/api/v1/auth/me', '/api/v1/users', '/api/v1/users/{id}', '/api/v1/audit-logs', '/api/v1/audit-logs/logs', '/api/v1/audit-logs/logs/{id}', '/api/v1/audit-logs/search', '/api/v1/audit-logs/verify', '/api/v1/orgs/partners', '/api/v1/orgs/partners/{id}', '/api/v1/orgs/partners/me', '/api/v1/orgs', '/api/v1/orgs/organizations', '/api/v1/orgs/organizations/order', '/api/v1/orgs/sites', '/api/v1/orgs/sites/{id}', '/healthz', '/readyz']) {
      assert.ok(doc.paths[path], `${path} missing from OpenAPI`);
    }
    assert.deepEqual(doc.paths['/api/v1/auth/me'].get.security, [{ bearerAuth: [] }]);
    assert.ok(doc.components.schemas.Problem);
    assert.ok(doc.paths['/api/v1/users'].post.responses['4XX']);
    // Operations that accept an API key document its rate-limit headers; JWT-only ones do not.
    const keyed = doc.paths['/api/v1/audit-logs/logs'].get;
    assert.ok(keyed.security.some((r: object) => 'apiKeyAuth' in r));
    assert.deepEqual(Object.keys(keyed.responses['200'].headers).sort(), ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    assert.ok(keyed.responses['4XX'].headers['Retry-After']);
    assert.equal(doc.paths['/api/v1/auth/me'].get.responses['200'].headers, undefined);
    const ui = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(ui.statusCode, 200);
    assert.match(ui.body, /swagger/i);
  });

  it('keeps secrets out of the logs', async () => {
    const stream = new PassThrough();
    let output = '';
    stream.on('data', (chunk) => (output += chunk));
    const logged = await testApp({ db: t.db, env: { LOG_LEVEL: 'trace' }, logStream: stream });
    try {
      const user = await createUser(t.db, { scope: 'system' });
      const session = await login(logged.app, user);
      await logged.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${session.accessToken}`, 'x-api-key': 'svc_secretvalue' } });
      await logged.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: session.refreshToken } });
    } finally {
      await logged.close();
    }
    assert.ok(output.includes('request completed'), 'expected request logs');
    for (const secret of ['correct horse battery staple', 'svc_secretvalue', 'Bearer ', 'rt_']) {
      assert.ok(!output.includes(secret), `log output contains ${secret}`);
    }
  });

  it('puts the requestId on every log line of a request, also on those services write', async () => {
    const stream = new PassThrough();
    let output = '';
    stream.on('data', (chunk) => (output += chunk));
    const logged = await testApp({ db: t.db, clock: t.clock, env: { LOG_LEVEL: 'info' }, logStream: stream });
    let answered: string;
    try {
      const admin = await loginWithMfa(logged.app, await createUser(t.db, { scope: 'system' }), t.clock);
      // A body arrives through socket events: the request's context must survive parsing it.
      const res = await as(logged.app, admin)({
        method: 'POST', url: '/api/v1/users/invitations', headers: { 'x-request-id': 'ops-trace-42' },
        payload: { email: `invitee-${Date.now()}@example.test`, name: 'Invited Person', role: 'readonly', scope: 'system' },
      });
      assert.equal(res.statusCode, 201, res.body);
      answered = String(res.headers['x-request-id']);
    } finally {
      await logged.close();
    }
    assert.equal(answered, 'ops-trace-42');
    const lines = output.split('\n').filter(Boolean);
    // The mailer logs through the application's logger, not request.log.
    const mail = lines.find((line) => line.includes('mail written to the outbox'));
    assert.ok(mail, 'expected the mailer to log');
    assert.equal(JSON.parse(mail).reqId, 'ops-trace-42');
    const request = lines.find((line) => line.includes('request completed') && line.includes('/users/invitations'));
    assert.ok(request);
    // Bound once, whichever way the line was written.
    for (const line of lines) assert.ok((line.match(/"reqId"/g) ?? []).length <= 1, line);
  });
});

for (const backend of backends()) {
  describe(`database outage on ${backend}`, () => {
    it('answers 503 problems instead of crashing', async () => {
      const t = await testApp({ backend });
      const user = await createUser(t.db, { scope: 'system' });
      const session = await login(t.app, user);
      await t.db.close();
      // Each with Retry-After, so clients back off instead of hammering a recovering database.
      const unavailable = [
        await t.app.inject({ method: 'GET', url: '/readyz' }),
        await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } }),
        await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: { authorization: `Bearer ${session.accessToken}` } }),
      ];
      for (const res of unavailable) {
        assertProblem(res, 503, 'SERVICE_UNAVAILABLE');
        assert.equal(res.headers['retry-after'], '5');
      }
      await t.app.close();
    });
  });
}

describe('unexpected errors', () => {
  it('answer 500 INTERNAL without the message or a stack', async () => {
    const app = Fastify({ logger: false });
    installErrorHandling(app);
    app.get('/boom', async () => {
      throw new Error('select * from secrets where password = hunter2');
    });
    const res = await app.inject({ method: 'GET', url: '/boom' });
    assert.equal(res.statusCode, 500);
    assert.equal(res.json().code, 'INTERNAL');
    assert.equal(res.json().detail, 'An unexpected error occurred');
    assert.ok(!res.body.includes('hunter2') && !res.body.includes('at '), res.body);
  });
});

describe('client IP', () => {
  async function ipApp(trust: boolean) {
    const app = Fastify();
    app.get('/ip', async (request) => ({ ip: clientIp(request, trust) }));
    return app;
  }
  const headers = { 'x-forwarded-for': '203.0.113.7, 10.0.0.1', 'x-real-ip': '198.51.100.2' };

  it('uses the socket address unless proxy headers are trusted', async () => {
    const app = await ipApp(false);
    const res = await app.inject({ method: 'GET', url: '/ip', headers, remoteAddress: '192.0.2.1' });
    assert.equal(res.json().ip, '192.0.2.1');
  });

  it('follows SPEC order when trusted: CDN header, x-forwarded-for, x-real-ip', async () => {
    const app = await ipApp(true);
    const ip = async (h: Record<string, string>) => (await app.inject({ method: 'GET', url: '/ip', headers: h, remoteAddress: '192.0.2.1' })).json().ip;
    assert.equal(await ip({ ...headers, 'cf-connecting-ip': '2001:db8::1' }), '2001:db8::1');
    assert.equal(await ip(headers), '203.0.113.7');
    assert.equal(await ip({ 'x-real-ip': '198.51.100.2' }), '198.51.100.2');
    assert.equal(await ip({ 'x-forwarded-for': 'not-an-ip' }), '192.0.2.1');
    assert.equal(await ip({}), '192.0.2.1');
  });
});

describe('pagination', () => {
  it('clamps page and limit as SPEC does', () => {
    assert.deepEqual(pageOf({}), { page: 1, limit: 50, offset: 0, withTotal: true });
    assert.deepEqual(pageOf({ page: -3, limit: 0 }), { page: 1, limit: 1, offset: 0, withTotal: true });
    assert.deepEqual(pageOf({ page: 3, limit: 500 }), { page: 3, limit: 100, offset: 200, withTotal: true });
    assert.deepEqual(pageOf({ limit: 5000 }, 1000), { page: 1, limit: 1000, offset: 0, withTotal: true });
    assert.ok(Number.isSafeInteger(pageOf({ page: 1e20, limit: 100 }).offset));
  });

  it('builds the list envelope with totals or nulls', () => {
    assert.deepEqual(paginated([1, 2], pageOf({ limit: 2 }), 5).pagination, { page: 1, limit: 2, total: 5, totalPages: 3 });
    assert.deepEqual(paginated([], pageOf({}), null).pagination, { page: 1, limit: 50, total: null, totalPages: null });
    // skipCount=true: no totals, whatever the caller counted.
    assert.deepEqual(paginated([1], pageOf({ skipCount: true }), 7).pagination, { page: 1, limit: 50, total: null, totalPages: null });
  });
});

describe('body rules beyond the schemas', () => {
  it('walks 100,000 levels without recursion and refuses what PostgreSQL cannot store', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    assert.equal(checkJsonBody(deep, false)?.errors?.[0]?.message, `must be nested at most ${MAX_JSON_DEPTH} levels deep`);
    assert.deepEqual(checkJsonBody({ a: [{ b: 'x\u0000' }] }, false)?.errors, [{ path: 'body.a.0.b', message: 'must not contain NUL or unpaired surrogate characters' }]);
    assert.deepEqual(checkJsonBody({ 'x\uD800': 1 }, false)?.errors?.[0]?.path, 'body.x\uFFFD');
    assert.deepEqual(checkJsonBody({ n: Infinity }, false)?.errors, [{ path: 'body.n', message: 'must be a finite number' }]);
    assert.equal(checkJsonBody({ text: 'tab\tand\u0001control', emoji: '😀', n: -0 }, false), null);
  });

  it('cleans what devices report instead of refusing it', () => {
    const reported = { 'k\u0000': ['v\uD800', -Infinity], ok: 'fine' };
    assert.equal(checkJsonBody(reported, true), null);
    assert.deepEqual(reported, { ok: 'fine', 'k\uFFFD': ['v\uFFFD', null] });
  });
});
