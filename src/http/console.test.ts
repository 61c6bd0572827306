// The web console is served at / with a fallback for its browser-side routes that never shadows the
// API, the documents or the probes; hashed assets are cached for good, pages never.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { assertProblem } from '../../test/support/clients.js';

const INDEX = '<!doctype html><html><body><div id="root"></div><script type="module" src="/assets/app-1a2b3c.js"></script></body></html>';
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

function builtConsole(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dms-console-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets', 'app-1a2b3c.js'), 'console.log("console")');
  return dir;
}

describe('web console serving', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ backend: 'pglite', consoleDir: builtConsole() });
  });
  after(() => t.close());

  it('serves index.html at / with a content security policy and no caching', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.body, INDEX);
    assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
    assert.equal(res.headers['cache-control'], 'no-store', 'pages stay out of every cache, the back-forward cache included');
  });

  it('answers deep links of the console with index.html, so a reload works', async () => {
    for (const url of ['/devices/0190f0c2-0000-7000-8000-000000000000/live', '/audit?action=user.login', '/no/such/page']) {
      const res = await t.app.inject({ method: 'GET', url, headers: HTML });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, INDEX, url);
      assert.equal(res.headers['cache-control'], 'no-store', url);
    }
  });

  it('serves hashed assets with a year-long immutable cache', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/assets/app-1a2b3c.js' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
  });

  it('never shadows the API, the documents or the probes', async () => {
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/no-such-route', headers: HTML }), 404, 'NOT_FOUND');
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v2', headers: HTML }), 404, 'NOT_FOUND');
    assertProblem(await t.app.inject({ method: 'GET', url: '/assets/missing.js', headers: HTML }), 404, 'NOT_FOUND');
    const docs = await t.app.inject({ method: 'GET', url: '/docs/', headers: HTML });
    assert.match(docs.body, /swagger/i);
    assert.equal((await t.app.inject({ method: 'GET', url: '/openapi.json', headers: HTML })).json().openapi, '3.1.0');
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz', headers: HTML })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/readyz', headers: HTML })).statusCode, 200);
  });

  it('answers non-page requests to unknown paths with a problem, not the console', async () => {
    assertProblem(await t.app.inject({ method: 'GET', url: '/devices/abc' }), 404, 'NOT_FOUND');
    assertProblem(await t.app.inject({ method: 'GET', url: '/devices/abc', headers: { accept: 'application/json' } }), 404, 'NOT_FOUND');
    assertProblem(await t.app.inject({ method: 'POST', url: '/devices', headers: HTML, payload: {} }), 404, 'NOT_FOUND');
  });
});

describe('web console not built', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ backend: 'pglite', consoleDir: mkdtempSync(path.join(os.tmpdir(), 'dms-console-empty-')) });
  });
  after(() => t.close());

  it('says how to build it instead of a bare 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /npm run build:web/);
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/no-such-route', headers: HTML }), 404, 'NOT_FOUND');
  });
});
