// The cluster test's machinery: service instances as real processes (src/main.ts, as `npm start`
// runs it), Debian's nginx running deploy/nginx.conf with this run's ports, and plain HTTP calls.
// Every process leads its own process group and is killed with it: in after(), and, should the
// test process end first (an exception, Ctrl-C, the runner's timeout), from exit and signal
// handlers, so no process or temporary directory outlives a run.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/free-port.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const groups = new Set<number>();
const tempDirs = new Set<string>();
const interruptCleanups: (() => void)[] = [];
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
const killAll = () => {
  for (const pid of groups) killGroup(pid, 'SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
};
process.on('exit', killAll);
// Interrupted (Ctrl-C, the runner's timeout): after() hooks will not run, nor 'exit' on the
// default signal death, and the runner may be gone before a promise settles: kill, run what the
// test registered, synchronously, and go.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    for (const fn of interruptCleanups.splice(0)) {
      try {
        fn();
      } catch {
        // best effort: the next run sweeps what is left
      }
    }
    process.exit(128 + (os.constants.signals[signal] ?? 0));
  });
}

/** Runs `fn` (synchronous) should the test process be interrupted by a signal. */
export function onInterrupt(fn: () => void): void {
  interruptCleanups.push(fn);
}

/** A temporary directory removed with the processes, whatever way the run ends. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

interface Spawned {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Epoch ms at which the process was seen to exit (null while it runs). */
  exitedAt(): number | null;
  exited: Promise<void>;
}

function spawnGroup(command: string, args: string[], env: Record<string, string>): Spawned {
  // detached: the child leads its own process group, so one kill reaches nginx's workers too.
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  groups.add(pid);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exitedAt: number | null = null;
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    exitedAt = Date.now();
    groups.delete(pid);
    resolve();
  }));
  return { child, pid, output: () => output, exitedAt: () => exitedAt, exited };
}

async function stopGroup(p: Spawned, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (p.exitedAt() !== null) return;
  killGroup(p.pid, signal);
  const timer = setTimeout(() => killGroup(p.pid, 'SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
  killGroup(p.pid, 'SIGKILL'); // anything the leader left behind in its group
}

export interface Instance {
  index: number;
  port: number;
  url: string;
  output(): string;
  exitedAt(): number | null;
  /** SIGKILL: no shutdown hook runs, no socket is closed politely, nothing is flushed. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** One service process on its own port and DATA_DIR, ready when /readyz says so. */
export async function startInstance(index: number, env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const dataDir = tempDir(`dms-cluster-${index}-`);
  const p = spawnGroup(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (p.exitedAt() !== null) throw new Error(`instance ${index} exited: ${p.output()}`);
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) throw new Error(`instance ${index} not ready: ${p.output()}`);
    await sleep(200);
  }
  const cleanUp = () => removeTempDir(dataDir);
  return {
    index, port, url, output: p.output, exitedAt: p.exitedAt,
    async kill() {
      await stopGroup(p, 'SIGKILL', 0);
      cleanUp();
    },
    async stop() {
      await stopGroup(p, 'SIGTERM', 10_000);
      cleanUp();
    },
  };
}

/**
 * deploy/nginx.conf with this run's upstream ports, listen port and files in `dir`: every other
 * line is the shipped one. Each substitution must match, so a reshaped config fails loudly here.
 */
export function renderNginxConf(upstreamPorts: number[], listenPort: number, dir: string): string {
  let conf = readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8');
  const replace = (from: string | RegExp, to: string) => {
    const next = conf.replace(from, to);
    if (next === conf) throw new Error(`deploy/nginx.conf no longer contains ${String(from)}`);
    conf = next;
  };
  // Root keeps the shipped `user` (workers as www-data, as in production); anyone else cannot switch.
  if (process.getuid?.() !== 0) replace('user www-data;\n', '');
  replace('pid /run/nginx.pid;', `pid ${dir}/nginx.pid;`);
  replace('error_log /var/log/nginx/error.log warn;', `error_log ${dir}/error.log warn;`);
  // Temporary files (bodies over 16 KiB) in the run's directory rather than /var/lib/nginx.
  replace('access_log /var/log/nginx/dms-access.log dms;', `access_log ${dir}/access.log dms;\n  ${
    ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `${kind}_temp_path ${dir}/${kind};`).join(' ')}`);
  replace('listen 80;', `listen 127.0.0.1:${listenPort};`);
  const servers = [...conf.matchAll(/^(\s*server )10\.0\.0\.\d+:3000( .*;)$/gm)];
  if (servers.length !== upstreamPorts.length) throw new Error(`deploy/nginx.conf lists ${servers.length} upstream servers, the test runs ${upstreamPorts.length}`);
  let i = 0;
  conf = conf.replace(/^(\s*server )10\.0\.0\.\d+:3000( .*;)$/gm, (_, head: string, tail: string) => `${head}127.0.0.1:${upstreamPorts[i++]}${tail}`);
  return conf;
}

export interface AccessLogLine {
  /** Epoch ms at which nginx finished the request. */
  at: number;
  method: string;
  path: string;
  status: number;
  /** Every instance tried, in order ("127.0.0.1:port"); more than one: nginx retried. */
  upstreams: string[];
  upstreamStatuses: string[];
}

export interface Nginx {
  url: string;
  accessLog(): AccessLogLine[];
  errorLog(): string;
  stop(): Promise<void>;
}

export async function startNginx(upstreamPorts: number[]): Promise<Nginx> {
  const dir = tempDir('dms-nginx-');
  chmodSync(dir, 0o755); // workers (www-data under root) create their temporary files in here
  const port = await freePort();
  writeFileSync(path.join(dir, 'nginx.conf'), renderNginxConf(upstreamPorts, port, dir));
  // In the foreground, as a child; -e: the log nginx writes before it has read the config.
  const p = spawnGroup(NGINX, ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { PATH: process.env.PATH ?? '' });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  const errorLog = () => (existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
  for (;;) {
    if (p.exitedAt() !== null) throw new Error(`nginx exited: ${p.output()} ${errorLog()}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) throw new Error(`nginx not answering: ${p.output()} ${errorLog()}`);
    await sleep(100);
  }
  return {
    url,
    errorLog,
    accessLog() {
      const text = existsSync(path.join(dir, 'access.log')) ? readFileSync(path.join(dir, 'access.log'), 'utf8') : '';
      return text.split('\n').flatMap((line) => {
        const m = /^\S+ \[\S+\] (\d+\.\d+) "(\S+) (\S+) [^"]*" (\d+) \d+ rid=\S+ up=(.*) upstatus=(.*) rt=/.exec(line);
        if (!m) return [];
        return [{
          at: Math.round(Number(m[1]) * 1000), method: m[2]!, path: m[3]!, status: Number(m[4]),
          upstreams: m[5] === '-' ? [] : m[5]!.split(/\s*,\s*|\s+:\s+/),
          upstreamStatuses: m[6]!.split(/\s*,\s*|\s+:\s+/),
        }];
      });
    },
    async stop() {
      await stopGroup(p, 'SIGQUIT', 5_000);
      removeTempDir(dir);
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** One JSON call; `key` sends X-API-Key, `token` a bearer. Network failures reject. */
export async function call(base: string, method: string, url: string, opts: { body?: unknown; key?: string; token?: string; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<Reply> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(opts.key ? { 'x-api-key': opts.key } : {}),
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  return { status: res.status, headers: res.headers, body };
}

/** `call`, failing the test unless the status is the expected one. */
export async function expectCall(expected: number, base: string, method: string, url: string, opts: Parameters<typeof call>[3] = {}): Promise<Record<string, unknown>> {
  const reply = await call(base, method, url, opts);
  if (reply.status !== expected) throw new Error(`${method} ${base}${url} → ${reply.status} (expected ${expected}): ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** Polls `probe` until it returns something truthy; a probe that throws ends the wait with its error. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
