// The exposition as the real thing reads it: Debian's Prometheus, started on a free port with a
// scrape config pointing at the service (bearer METRICS_TOKEN, one-second interval), scrapes it
// without an error and serves series back through its HTTP API; promtool finds nothing to say
// about the service's metric names. Without the binary a developer gets a skip; CI must have it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { PROMETHEUS_MISSING, prometheusPath, startPrometheus, type Prometheus } from '../../test/support/prometheus.js';

const TOKEN = 'metrics-token-for-prometheus-0123456789';
const prometheusSkip = !prometheusPath() && !process.env.CI ? `${PROMETHEUS_MISSING}; skipping the scrape by a real Prometheus` : false;

/** promtool's lint of an exposition: its exit code and what it printed. */
function promtoolCheckMetrics(text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
    child.stdin.end(text);
  });
}

describe('a real Prometheus scraping GET /metrics', { skip: prometheusSkip }, () => {
  let t: TestApp;
  let prometheus: Prometheus | undefined;
  before(async () => {
    t = await testApp({ env: { METRICS_TOKEN: TOKEN } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    prometheus = await startPrometheus({ target: `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, token: TOKEN });
  });
  // Prometheus goes first, whatever happened: it must not outlive the test.
  after(async () => {
    await prometheus?.stop();
    await t?.close();
  });

  it('scrapes it without an error, and reads the series back through /api/v1/query', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    const p = prometheus!;
    await p.waitFor('up{job="dms"}', (samples) => samples[0]?.value[1] === '1');
    const target = await p.target();
    assert.equal(target?.health, 'up');
    assert.equal(target?.lastError, '', 'the exposition parses');

    const requests = await p.waitFor('dms_http_requests_total{job="dms",method="GET",route="/healthz",status="200"}', (s) => Number(s[0]?.value[1]) >= 3);
    assert.equal(requests.length, 1);
    const p99 = await p.query('histogram_quantile(0.99, sum by (le) (dms_http_request_duration_seconds_bucket{route="/healthz"}))');
    assert.ok(Number.isFinite(Number(p99[0]?.value[1])), `p99 of /healthz: ${JSON.stringify(p99)}`);
    assert.equal((await p.query('dms_agent_sockets'))[0]?.value[1], '0');
    assert.ok(Number((await p.query('sum(dms_db_transactions_total)'))[0]?.value[1]) > 0);
    assert.equal((await p.query('dms_audit_seal_lag_seconds')).length, 1);
    assert.ok(Number((await p.query('process_resident_memory_bytes'))[0]?.value[1]) > 0);
  });

  it('finds nothing to lint in the service’s own metric names (promtool check metrics)', async () => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
    // prom-client's standard process set has three gauges named *_total, which promtool flags; ours only.
    const own = text.split('\n').filter((l) => /^(# (HELP|TYPE) )?dms_/.test(l)).join('\n');
    assert.ok(own.includes('# TYPE dms_http_request_duration_seconds histogram'));
    assert.deepEqual(await promtoolCheckMetrics(`${own}\n`), { code: 0, output: '' });
  });
});
