// Metrics (issue 22): what they cost the request path, and what a scrape costs. JWT GET /auth/me on
// a service with METRICS_TOKEN set against the same route on a service without it (metrics off:
// no hook, no wrapper), both on one database, interleaved (target: >= 0.98x, i.e. under 2%); then
// GET /metrics on the metrics-on service holding 10,000 agent sockets (target: p99 < 100 ms, at
// 10 scrapes/s over one connection for 10 s: the audit queue is read again twice in each pass, and
// the sockets' keep-alive round, every 30 s, falls inside the passes).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { compareRoutes, createDatabase, fixedRate, median, round, RUNS, startService, type Row } from './harness.js';
import { seedDevices, startAgents, stopAgents } from './live-queries.bench.js';

export const name = 'metrics';
const TOKEN = randomBytes(24).toString('hex');
const SOCKETS = 10_000;

async function agentSockets(serviceUrl: string): Promise<number> {
  const text = await (await fetch(`${serviceUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  return Number(/^dms_agent_sockets (\d+)$/m.exec(text)?.[1] ?? NaN);
}

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const on = await startService(database.url, { METRICS_TOKEN: TOKEN });
  const off = await startService(database.url);
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const rows: Row[] = [];
  try {
    const me = (s: typeof on) => ({ url: `${s.service.url}/api/v1/auth/me`, headers: { authorization: `Bearer ${s.adminToken}` } });
    const r = await compareRoutes('/auth/me, metrics on against off', me(on), me(off));
    const ratio = round(r.rps / r.bareRps, 3);
    rows.push(
      { name: 'metrics: GET /auth/me (JWT) with METRICS_TOKEN set, at 50 connections (baseline: unset)', figure: r.rps, unit: 'req/s', baseline: r.bareRps, ratio, target: '>= 0.98x unset', pass: ratio >= 0.98 },
      { name: 'metrics: GET /auth/me with metrics on, p50 at 200 req/s (baseline: off)', figure: r.p50, unit: 'ms', baseline: r.bareP50, ratio: null },
      { name: 'metrics: GET /auth/me with metrics on, p99 at 200 req/s (baseline: off)', figure: r.p99, unit: 'ms', baseline: r.bareP99, ratio: null },
    );
    await off.service.stop();

    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench MSP', 'bench-msp', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Customer', 'customer') returning id`, [partner.id]);
    const { rows: [site] } = await admin.query(`insert into sites (org_id, name) values ($1, 'HQ') returning id`, [org.id]);
    const agents = await startAgents(on.service.url, await seedDevices(admin, org.id, site.id, SOCKETS));
    try {
      const deadline = Date.now() + 60_000;
      while ((await agentSockets(on.service.url)) !== SOCKETS) {
        if (Date.now() > deadline) throw new Error(`metrics: ${await agentSockets(on.service.url)} of ${SOCKETS} agent sockets attached after 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const scrapes = [];
      for (let i = 0; i < RUNS; i++) {
        const s = await fixedRate(`${on.service.url}/metrics`, { rate: 10, headers: { authorization: `Bearer ${TOKEN}` } });
        if (s.non2xx || s.errors) throw new Error(`metrics: ${s.non2xx} non-2xx and ${s.errors} errors scraping /metrics`);
        scrapes.push(s);
      }
      const p99 = round(median(scrapes.map((s) => s.p99)), 2);
      const size = (await (await fetch(`${on.service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text()).length;
      rows.push(
        { name: `metrics: GET /metrics with ${SOCKETS.toLocaleString('en')} agent sockets, p99 at 10 scrapes/s`, figure: p99, unit: 'ms', baseline: null, ratio: null, target: '< 100 ms', pass: p99 < 100 },
        { name: 'metrics: GET /metrics, p50 at 10 scrapes/s (information)', figure: round(median(scrapes.map((s) => s.p50)), 2), unit: 'ms', baseline: null, ratio: null },
        { name: 'metrics: exposition size after the loads (information)', figure: round(size / 1024, 1), unit: 'KiB', baseline: null, ratio: null },
      );
    } finally {
      await stopAgents(agents);
    }
    return rows;
  } finally {
    await admin.end();
    await on.service.stop();
    await off.service.stop();
    await database.drop();
  }
}
