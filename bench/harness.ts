// Shared benchmark machinery (DESIGN.md §8): fresh database, the service and the bare baseline as
// child processes, autocannon at saturation and at a fixed 200 requests/s, medians of three runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import http from 'node:http';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort } from '../test/support/free-port.js';
import { hashPassword } from '../src/identity/passwords.js';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
export const SATURATION_CONNECTIONS = 50;
export const FIXED_RATE = 200;

export interface Row {
  name: string;
  figure: number;
  unit: string;
  baseline: number | null;
  ratio: number | null;
  target?: string;
  pass?: boolean;
}

export interface Server {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function createDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `dms_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Starts a TypeScript entry point on a free port and waits until `readyPath` answers 200. */
export async function startProcess(entry: string, env: Record<string, string>, readyPath = '/healthz'): Promise<Server> {
  const port = await freePort();
  const nodeFlags = process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : [];
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? 1));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) throw new Error(`${entry} exited with ${exited}: ${stderr}`);
    try {
      if ((await fetch(url + readyPath)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${entry} did not become ready within 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    process: child,
    stop: () =>
      new Promise((done) => {
        if (exited !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

export interface LoadResult {
  rps: number;
  /** Responses with a 2xx status. */
  ok: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Responses by status code (saturation passes). */
  statuses?: Record<string, number>;
}

/** Headers for a load: fixed, or a list taken in turn request by request (e.g. several API keys). */
export type LoadHeaders = Record<string, string> | Record<string, string>[];

function headerSource(headers: LoadHeaders | undefined): () => Record<string, string> {
  if (!Array.isArray(headers)) return () => headers ?? {};
  let i = 0;
  return () => headers[i++ % headers.length]!;
}

/** One request of a load, built request by request (e.g. a different body each time). */
export interface LoadRequest {
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export async function load(
  url: string,
  options: {
    headers?: LoadHeaders;
    connections: number;
    rate?: number;
    duration?: number;
    amount?: number;
    /** taken in turn, request by request */
    paths?: string[];
    /** called for every request; its fields override the url's path and the method and add headers */
    request?: () => LoadRequest;
  },
): Promise<LoadResult> {
  const next = headerSource(options.headers);
  let pathIndex = 0;
  const nextPath = () => options.paths![pathIndex++ % options.paths!.length]!;
  const dynamic = options.paths || options.request;
  const setupRequest = (req: autocannon.Request) => {
    const extra = options.request?.() ?? {};
    return {
      ...req,
      ...(options.paths ? { path: nextPath() } : {}),
      ...(extra.path ? { path: extra.path } : {}),
      ...(extra.method ? { method: extra.method as autocannon.Request['method'] } : {}),
      ...(extra.body !== undefined ? { body: extra.body } : {}),
      headers: { ...req.headers, ...next(), ...extra.headers },
    };
  };
  const result = await autocannon({
    url,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? DURATION_S }),
    ...(options.rate ? { overallRate: options.rate } : {}),
    ...(dynamic || Array.isArray(options.headers) ? { requests: [{ setupRequest }] } : { headers: options.headers ?? {} }),
  });
  return {
    rps: result.requests.average,
    ok: result['2xx'],
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statuses: Object.fromEntries(Object.entries((result as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {}).map(([code, s]) => [code, s.count])),
  };
}

/**
 * The fixed-rate latency pass (DESIGN.md §8): one keep-alive connection, one request every
 * 1000/rate ms, each timed in microseconds from its scheduled start, so a slow response that
 * delays the next request counts against that request too (no coordinated omission).
 */
export async function fixedRate(url: string, options: { headers?: LoadHeaders; rate: number; duration?: number }): Promise<LoadResult> {
  const next = headerSource(options.headers);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  const interval = 1000 / options.rate;
  const total = Math.round((options.duration ?? DURATION_S) * options.rate);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const started = performance.now();
  const send = () =>
    new Promise<number>((resolve) => {
      const req = http.request(
        { agent, host: target.hostname, port: target.port, path: target.pathname + target.search, headers: next() },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end();
    });
  for (let i = 0; i < total; i++) {
    const scheduled = started + i * interval;
    const wait = scheduled - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait - 1));
    while (performance.now() < scheduled); // timers fire up to a millisecond early: spin out the rest
    const status = await send();
    latencies.push(performance.now() - scheduled);
    if (status === 0) errors++;
    else if (status < 200 || status >= 300) non2xx++;
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!, 3);
  return { rps: total / ((performance.now() - started) / 1000), ok: total - non2xx - errors, p50: pct(0.5), p99: pct(0.99), non2xx, errors };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** One side of a comparison: a route and how each request to it is made. */
export interface Route {
  url: string;
  headers?: LoadHeaders;
  /** per request (method, path, body); the saturation pass only */
  request?: () => LoadRequest;
}

export interface Comparison {
  rps: number;
  bareRps: number;
  satP50: number;
  bareSatP50: number;
  satP99: number;
  bareSatP99: number;
  /** Fixed-rate pass (NaN when it was not run). */
  p99: number;
  bareP99: number;
  p50: number;
  bareP50: number;
}

/**
 * Measures a service route against a baseline route: throughput at saturation (`connections`) and,
 * unless `fixedRate` is false, latency at the fixed rate; medians of RUNS interleaved runs
 * (DESIGN.md §8). Every response of either side must be 2xx. `afterService` runs after each
 * saturation load of the service (the warm-up included, run 0), before anything else is measured.
 */
export async function compareRoutes(
  label: string,
  service: Route,
  baseline: Route,
  options: { connections?: number; fixedRate?: boolean; afterService?: (run: number, result: LoadResult) => Promise<void> } = {},
): Promise<Comparison> {
  const connections = options.connections ?? SATURATION_CONNECTIONS;
  const check = (side: string, r: LoadResult) => {
    if (r.non2xx || r.errors) throw new Error(`${label} (${side}): ${r.non2xx} non-2xx and ${r.errors} errors${r.statuses ? ` (statuses ${JSON.stringify(r.statuses)})` : ''}`);
  };
  const saturate = async (side: string, route: Route, duration?: number) => {
    const r = await load(route.url, { connections: duration ? 10 : connections, duration, headers: route.headers, request: route.request });
    check(side, r);
    return r;
  };
  await saturate('baseline', baseline, 2);
  await options.afterService?.(0, await saturate('service', service, 2));
  const runs: { bareSat: LoadResult; sat: LoadResult; bareRate?: LoadResult; rate?: LoadResult }[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternate which side goes first, so neither always runs on a machine the other just warmed
    // (or heated): with both sides in one process pair, order alone moved ratios by several percent.
    let bareSat: LoadResult;
    let sat: LoadResult;
    if (i % 2 === 0) {
      bareSat = await saturate('baseline', baseline);
      sat = await saturate('service', service);
    } else {
      sat = await saturate('service', service);
      bareSat = await saturate('baseline', baseline);
    }
    await options.afterService?.(i + 1, sat);
    if (options.fixedRate === false) {
      runs.push({ bareSat, sat });
      continue;
    }
    const bareRate = await fixedRate(baseline.url, { rate: FIXED_RATE, headers: baseline.headers });
    const rate = await fixedRate(service.url, { rate: FIXED_RATE, headers: service.headers });
    check('baseline, fixed rate', bareRate);
    check('service, fixed rate', rate);
    runs.push({ bareSat, sat, bareRate, rate });
  }
  const m = (pick: (r: (typeof runs)[number]) => number | undefined) => round(median(runs.map((r) => pick(r) ?? NaN)), 3);
  return {
    rps: m((r) => r.sat.rps),
    bareRps: m((r) => r.bareSat.rps),
    satP50: m((r) => r.sat.p50),
    bareSatP50: m((r) => r.bareSat.p50),
    satP99: m((r) => r.sat.p99),
    bareSatP99: m((r) => r.bareSat.p99),
    p99: m((r) => r.rate?.p99),
    bareP99: m((r) => r.bareRate?.p99),
    p50: m((r) => r.rate?.p50),
    bareP50: m((r) => r.bareRate?.p50),
  };
}

/**
 * Measures an authenticated route against the bare baseline answering the same body: throughput
 * at saturation and latency at the fixed rate, medians of RUNS interleaved runs (DESIGN.md §8).
 */
export async function compareWithBare(label: string, url: string, headers: LoadHeaders): Promise<Comparison> {
  const body = await (await fetch(url, { headers: headerSource(headers)() })).text();
  const bare = await startProcess('bench/bare-server.ts', { BARE_BODY: body }, '/bare');
  try {
    return await compareRoutes(label, { url, headers }, { url: `${bare.url}/bare` });
  } finally {
    await bare.stop();
  }
}

/**
 * The database baselines (bench/bare-db-server.ts) on the service's database: `GET /bare-db-read`
 * (one prepared primary-key SELECT of `read.table` row `read.id`, answering `read.body` filled in
 * from the row) and `PATCH /bare-db-write/:id` (one transaction with one prepared audit-width
 * INSERT, answering `writeBody` with the id and name), each through a pg.Pool of 20.
 */
export function startBareDb(databaseUrl: string, options: { read?: { body: string; table: string; id: string }; writeBody?: string }): Promise<Server> {
  return startProcess('bench/bare-db-server.ts', {
    DATABASE_URL: databaseUrl,
    ...(options.read ? { BARE_READ_BODY: options.read.body, BARE_READ_TABLE: options.read.table, BARE_READ_ID: options.read.id } : {}),
    ...(options.writeBody ? { BARE_WRITE_BODY: options.writeBody } : {}),
  });
}

/** The service on a fresh database, signed in as its bootstrap admin. */
export async function startService(databaseUrl: string, env: Record<string, string> = {}) {
  const password = 'bench-password-123';
  const service = await startProcess('src/main.ts', {
    DATABASE_URL: databaseUrl,
    DATA_DIR: `/tmp/dms-bench-${process.pid}`,
    BOOTSTRAP_ADMIN_EMAIL: 'bench@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: password,
    ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
    // Extra settings for every service a bench starts, e.g. '{"DATABASE_POOL_SIZE":"10"}'.
    ...(process.env.BENCH_SERVICE_ENV ? (JSON.parse(process.env.BENCH_SERVICE_ENV) as Record<string, string>) : {}),
    ...env,
  });
  const adminToken = await signIn(service.url, 'bench@example.test', password);
  return { service, adminToken };
}

export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  const body = (await res.json()) as { accessToken?: string };
  if (!body.accessToken) throw new Error(`sign-in failed: ${JSON.stringify(body)}`);
  return body.accessToken;
}

/**
 * An organization admin written straight into the database (creating users through the API needs
 * an MFA-verified session), signed in: the JWT caller of the benches.
 */
export async function orgAdminToken(admin: { query(sql: string, params: unknown[]): Promise<unknown> }, serviceUrl: string, partnerId: string, orgId: string): Promise<string> {
  const email = 'admin@customer.example';
  const password = 'bench-password-789';
  await admin.query(
    `insert into users (email, name, password_hash, scope, partner_id, org_id, role) values ($1, 'Customer Admin', $2, 'organization', $3, $4, 'admin')`,
    [email, await hashPassword(password), partnerId, orgId],
  );
  return signIn(serviceUrl, email, password);
}
