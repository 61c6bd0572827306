// Request tracing, on the real process as `npm start` runs it: with OTEL_EXPORTER_OTLP_ENDPOINT set,
// the official SDK exports HTTP, PostgreSQL and Redis spans of a request as one trace to an OTLP/HTTP
// receiver (a server of the test), named by route, tagged with the requestId, without query strings;
// log lines carry the requestId and the trace's id. Without the variable no OpenTelemetry module is
// loaded at all (recorded by a module hook in the child).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { privateTestDatabase, testRedisUrl } from '../../test/support/app.js';
import { stopChild } from '../../test/support/child-process.js';
import { freePort } from '../../test/support/free-port.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PASSWORD = 'correct horse battery staple';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
}

/** An OTLP/HTTP receiver: the JSON the exporter posts to /v1/traces, flattened to spans. */
async function startReceiver() {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const parsed = JSON.parse(body) as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: (Omit<OtlpSpan, 'scope' | 'attributes'> & { attributes: { key: string; value: Record<string, unknown> }[] })[] }[] }[] };
        for (const resource of parsed.resourceSpans) {
          for (const scoped of resource.scopeSpans) {
            for (const span of scoped.spans) {
              const attributes = Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
              spans.push({ ...span, scope: scoped.scope.name, attributes });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, spans, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function startService(env: Record<string, string>, nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dms-otel-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.once('exit', () => (exited = true));
  return { child, output: () => ({ stdout, stderr }), stop: () => stopChild(child, exited) };
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const found = await probe();
      if (found !== undefined) return found;
    } catch {
      // not yet
    }
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function login(base: string, query = '') {
  const res = await fetch(`${base}/api/v1/auth/login${query}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ops@example.test', password: PASSWORD }),
  });
  assert.equal(res.status, 200);
  return { requestId: res.headers.get('x-request-id')!, body: (await res.json()) as { accessToken: string; refreshToken: string } };
}

describe('OpenTelemetry tracing', () => {
  const skip = process.env.TEST_DATABASE_URL ? false : 'needs PostgreSQL (TEST_DATABASE_URL) for its spans';

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', { skip }, () => {
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let database: Awaited<ReturnType<typeof privateTestDatabase>>;
    let service: ReturnType<typeof startService>;
    let base: string;
    let redisUrl: string | null;

    before(async () => {
      receiver = await startReceiver();
      database = await privateTestDatabase('postgres');
      redisUrl = await testRedisUrl();
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      service = startService({
        PORT: String(port), DATABASE_URL: database.url!, ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
        BOOTSTRAP_ADMIN_EMAIL: 'ops@example.test', BOOTSTRAP_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'info',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      await waitFor('the service', async () => ((await fetch(`${base}/readyz`)).ok ? true : undefined));
    });
    after(async () => {
      await service?.stop();
      await receiver?.close();
      await database?.drop();
    });

    it('exports a request as one trace: its HTTP span named by route, its SQL, its Redis calls', async () => {
      const signedIn = await login(base, '?probe=do-not-export-me');
      const server = await waitFor('the login span', () =>
        receiver.spans.find((s) => s.kind === 2 && s.attributes['request.id'] === signedIn.requestId));
      assert.equal(server.name, 'POST /api/v1/auth/login');
      assert.equal(server.attributes['http.route'], '/api/v1/auth/login');
      assert.equal(server.attributes['http.response.status_code'], 200);
      const inTrace = () => receiver.spans.filter((s) => s.traceId === server.traceId);
      const sql = await waitFor('SQL spans', () => (inTrace().some((s) => s.scope.endsWith('instrumentation-pg')) ? inTrace() : undefined));
      // The statements hang under the request's span, and carry SQL text, never values.
      const statements = sql.filter((s) => s.scope.endsWith('instrumentation-pg') && s.attributes['db.query.text']);
      assert.ok(statements.length > 0);
      assert.ok(statements.every((s) => !String(s.attributes['db.query.text']).includes('ops@example.test')));

      // Signing out drops the session's cached caller on every instance: a Redis publish.
      if (redisUrl) {
        const res = await fetch(`${base}/api/v1/auth/logout`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken: signedIn.body.refreshToken }),
        });
        assert.equal(res.status, 200);
        const logoutId = res.headers.get('x-request-id');
        const logout = await waitFor('the logout span', () => receiver.spans.find((s) => s.kind === 2 && s.attributes['request.id'] === logoutId));
        await waitFor('a Redis span in the logout trace', () =>
          receiver.spans.find((s) => s.traceId === logout.traceId && s.scope.endsWith('instrumentation-ioredis')));
      }

      const everything = JSON.stringify(receiver.spans);
      assert.ok(!everything.includes('do-not-export-me'), 'query strings stay out of spans');
      assert.ok(!everything.includes(PASSWORD));

      // The access-log line of the request names its trace (log lines are written in 4 KiB blocks:
      // all are out once the process has stopped).
      await service.stop();
      const line = service.output().stdout.split('\n').find((l) => l.includes(signedIn.requestId) && l.includes('request completed'));
      assert.ok(line, 'the request was logged');
      assert.equal(JSON.parse(line).trace_id, server.traceId);
    });
  });

  it('loads no OpenTelemetry module when OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    // A module hook in the child writes every URL it resolves to a file.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dms-otel-off-'));
    const record = path.join(dir, 'resolved.txt');
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(hooks, `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(record)}, result.url + '\\n');
  return result;
}`);
    const register = path.join(dir, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module'; register(${JSON.stringify(`file://${hooks}`)});`);
    const port = await freePort();
    const service = startService({ PORT: String(port) }, ['--import', `file://${register}`]);
    try {
      await waitFor('the service', async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok ? true : undefined));
      await fetch(`http://127.0.0.1:${port}/api/v1/auth/me`);
    } finally {
      await service.stop();
    }
    const resolved = readFileSync(record, 'utf8').split('\n');
    assert.ok(resolved.some((url) => url.includes('/src/app.ts')), 'the hook saw the service load');
    assert.deepEqual(resolved.filter((url) => url.includes('opentelemetry')), []);
  });
});
