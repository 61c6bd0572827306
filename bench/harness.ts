// Shared benchmark machinery (DESIGN.md §8): fresh database, the service and the bare baseline as
// child processes, autocannon at saturation and at a fixed 200 requests/s, medians of three runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import http from 'node:http';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort } from '../test/support/free-port.js';

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
}

/** Headers for a load: fixed, or a list taken in turn request by request (e.g. several API keys). */
export type LoadHeaders = Record<string, string> | Record<string, string>[];

function headerSource(headers: LoadHeaders | undefined): () => Record<string, string> {
  if (!Array.isArray(headers)) return () => headers ?? {};
  let i = 0;
  return () => headers[i++ % headers.length]!;
}

export async function load(
  url: string,
  options: { headers?: LoadHeaders; connections: number; rate?: number; duration?: number; amount?: number; /** taken in turn, request by request */ paths?: string[] },
): Promise<LoadResult> {
  const next = headerSource(options.headers);
  let pathIndex = 0;
  const nextPath = () => options.paths![pathIndex++ % options.paths!.length]!;
  const result = await autocannon({
    url,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? DURATION_S }),
    ...(options.rate ? { overallRate: options.rate } : {}),
    ...(Array.isArray(options.headers) || options.paths
      ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, ...(options.paths ? { path: nextPath() } : {}), headers: { ...req.headers, ...next() } }) }] }
      : { headers: options.headers ?? {} }),
  });
  return {
    rps: result.requests.average,
    ok: result['2xx'],
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
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

/**
 * Measures an authenticated route against the bare baseline answering the same body: throughput
 * at saturation and latency at the fixed rate, medians of RUNS interleaved runs (DESIGN.md §8).
 */
export async function compareWithBare(label: string, url: string, headers: LoadHeaders) {
  const body = await (await fetch(url, { headers: headerSource(headers)() })).text();
  const bare = await startProcess('bench/bare-server.ts', { BARE_BODY: body }, '/bare');
  try {
    const bareUrl = `${bare.url}/bare`;
    await load(bareUrl, { connections: 10, duration: 2 });
    await load(url, { connections: 10, duration: 2, headers });
    const runs: { bareSat: LoadResult; sat: LoadResult; bareRate: LoadResult; rate: LoadResult }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const bareSat = await load(bareUrl, { connections: SATURATION_CONNECTIONS });
      const sat = await load(url, { connections: SATURATION_CONNECTIONS, headers });
      const bareRate = await fixedRate(bareUrl, { rate: FIXED_RATE });
      const rate = await fixedRate(url, { rate: FIXED_RATE, headers });
      for (const r of [sat, rate]) if (r.non2xx || r.errors) throw new Error(`${label}: ${r.non2xx} non-2xx and ${r.errors} errors`);
      runs.push({ bareSat, sat, bareRate, rate });
    }
    const m = (pick: (r: (typeof runs)[number]) => number) => round(median(runs.map(pick)), 3);
    return {
      rps: m((r) => r.sat.rps),
      bareRps: m((r) => r.bareSat.rps),
      satP99: m((r) => r.sat.p99),
      bareSatP99: m((r) => r.bareSat.p99),
      p99: m((r) => r.rate.p99),
      bareP99: m((r) => r.bareRate.p99),
      p50: m((r) => r.rate.p50),
      bareP50: m((r) => r.bareRate.p50),
    };
  } finally {
    await bare.stop();
  }
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
