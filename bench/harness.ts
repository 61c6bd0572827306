// Shared benchmark machinery (DESIGN.md §8): fresh database, the service and the bare baseline as
// child processes, autocannon at saturation and at a fixed 200 requests/s, medians of three runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

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

/** Starts a TypeScript entry point as a child process and waits until it listens. */
export function startProcess(entry: string, env: Record<string, string>, ready: RegExp): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve({
          url: `http://127.0.0.1:${match[1]}`,
          process: child,
          stop: () => new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code}:\n${output}`)));
  });
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export async function load(url: string, options: { headers?: Record<string, string>; connections: number; rate?: number; duration?: number }): Promise<LoadResult> {
  const result = await autocannon({
    url,
    headers: options.headers ?? {},
    connections: options.connections,
    duration: options.duration ?? DURATION_S,
    ...(options.rate ? { overallRate: options.rate } : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
