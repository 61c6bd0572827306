// A real Prometheus (Debian's package, never its systemd service) for the metrics tests: started on
// a free loopback port with a scrape config of the test's own (one target, a bearer token, a
// one-second interval) and a storage directory in a temp dir, and stopped with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { stopChild } from './child-process.js';

export const PROMETHEUS_MISSING = 'prometheus is not installed (apt-get install prometheus)';

/** A result of /api/v1/query: one sample per series. */
export interface QuerySample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface Prometheus {
  url: string;
  /** An instant query through the HTTP API (/api/v1/query). */
  query(expr: string): Promise<QuerySample[]>;
  /** Polls `expr` until it returns at least one sample passing `accept`. */
  waitFor(expr: string, accept?: (samples: QuerySample[]) => boolean, timeoutMs?: number): Promise<QuerySample[]>;
  /** The scrape target as Prometheus reports it: health and the last scrape's error. */
  target(): Promise<{ health: string; lastError: string } | null>;
  stop(): Promise<void>;
}

/** A program on PATH or in /usr/bin (where Debian installs prometheus and promtool); null when absent. */
function binaryPath(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin'].filter(Boolean)) {
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return path.join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

export const prometheusPath = () => binaryPath('prometheus');
export const promtoolPath = () => binaryPath('promtool');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function scrapeConfig(target: string, tokenFile: string): string {
  // JSON is YAML: no quoting to get wrong.
  return JSON.stringify({
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    scrape_configs: [{
      job_name: 'dms',
      metrics_path: '/metrics',
      authorization: { type: 'Bearer', credentials_file: tokenFile },
      static_configs: [{ targets: [target] }],
    }],
  }, null, 2);
}

/** Starts Prometheus scraping `target` (host:port) with `token` as the bearer. */
export async function startPrometheus(options: { target: string; token: string }): Promise<Prometheus> {
  const binary = prometheusPath();
  if (!binary) throw new Error(PROMETHEUS_MISSING);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dms-prometheus-'));
  let child: ChildProcess | undefined;
  let output = '';
  let exited = false;

  const stop = async () => {
    await stopChild(child, exited);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const tokenFile = path.join(dir, 'token');
    await writeFile(tokenFile, options.token, { mode: 0o600 });
    await writeFile(path.join(dir, 'prometheus.yml'), scrapeConfig(options.target, tokenFile));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    child = spawn(binary, [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A test process that dies without stop() must not leave Prometheus behind.
    const killOnExit = () => child?.kill('SIGKILL');
    process.once('exit', killOnExit);
    child.on('exit', () => {
      exited = true;
      process.off('exit', killOnExit);
    });

    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited) throw new Error(`prometheus exited at start:\n${output}`);
      const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`prometheus was not ready within 30 s:\n${output}`);
      await sleep(100);
    }

    const query = async (expr: string): Promise<QuerySample[]> => {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: QuerySample[] } };
      if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error ?? res.status}`);
      return body.data!.result;
    };
    return {
      url,
      query,
      async waitFor(expr, accept = (samples) => samples.length > 0, timeoutMs = 20_000) {
        const until = Date.now() + timeoutMs;
        for (;;) {
          const samples = await query(expr);
          if (accept(samples)) return samples;
          if (Date.now() > until) throw new Error(`${expr}: still ${JSON.stringify(samples)} after ${timeoutMs} ms\n${output}`);
          await sleep(250);
        }
      },
      async target() {
        const res = await fetch(`${url}/api/v1/targets?state=active`);
        const body = (await res.json()) as { data: { activeTargets: { health: string; lastError: string }[] } };
        return body.data.activeTargets[0] ?? null;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
