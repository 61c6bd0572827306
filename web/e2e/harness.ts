// End-to-end support: the service started as the README starts it (embedded database, its own
// DATA_DIR and port), Debian's Chromium driven by playwright-core, the reference agent as a process,
// and a screenshot per step under test-results/console/.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page, type Request as PlaywrightRequest } from 'playwright-core';
import { TOTP } from 'otpauth';
import { freePort } from '../../test/support/free-port.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'test-results', 'console');
export const ADMIN = { email: 'admin@console-e2e.test', password: 'correct horse battery staple' };

/** Why the browser tests cannot run here, or null. CI must run them (.ci/run installs Chromium). */
export function cannotRun(): string | null {
  if (!existsSync(path.join(ROOT, 'web', 'dist', 'index.html'))) return 'the console is not built (npm run build:web)';
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  return null;
}

function tsxProcess(script: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export interface Service { url: string; dataDir: string; output(): string; stop(): Promise<void> }

/** `npm start` in essence: src/main.ts on PGlite in a fresh DATA_DIR; `env` adds settings (OUTBOUND_ALLOW_PRIVATE…). */
export async function startService(env: Record<string, string> = {}): Promise<Service> {
  // The port is free when picked but may be taken (by another test's listener, or as the local
  // port of some outgoing connection) before the service binds it: then it starts again on another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServiceOnce(await freePort(), env);
    } catch (err) {
      if (attempt === 3 || !(err instanceof PortTakenError)) throw err;
    }
  }
}

class PortTakenError extends Error {}

async function startServiceOnce(port: number, env: Record<string, string>): Promise<Service> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dms-e2e-'));
  const child = tsxProcess('src/main.ts', [], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    ...env,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      rmSync(dataDir, { recursive: true, force: true });
      throw output.includes('EADDRINUSE') ? new PortTakenError(`port ${port} was taken: ${output}`) : new Error(`the service exited: ${output}`);
    }
    const ready = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ready && child.exitCode === null) break; // (a service of another test on the port would answer too)
    if (Date.now() > deadline) {
      await stop(child);
      throw new Error(`the service did not become ready: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    dataDir,
    output: () => output,
    async stop() {
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Agent { output(): string; stop(): Promise<void> }

/** The reference agent, exactly as the console's enrollment-key screen tells users to run it. */
export function startAgent(serverUrl: string, enrollmentKey: string): Agent {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'dms-e2e-agent-'));
  const child = tsxProcess('src/agent/main.ts', ['--server', serverUrl, '--enrollment-key', enrollmentKey, '--state', path.join(stateDir, 'agent.json')], {});
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  return {
    output: () => output,
    async stop() {
      await stop(child);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // This machine's network is closed: without these Chromium keeps trying Google's hosts.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Saves test-results/console/[prefix-]NN-name.png; the README shows some of them. */
export function screenshots(page: Page, prefix = ''): (name: string) => Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  let step = 0;
  return async (name) => {
    step += 1;
    const file = `${prefix ? `${prefix}-` : ''}${String(step).padStart(2, '0')}-${name}.png`;
    await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true });
  };
}

/** JSON over HTTP to the service, for seeding what a test does not drive through the console. */
export async function apiCall<T = Record<string, unknown>>(service: Service, method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const res = await fetch(`${service.url}/api/v1${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

/**
 * Counts the page's API requests in flight from now on; `idle()` resolves once none has been in
 * flight for `quietMs` (playwright's networkidle is of the document's load, long past in a
 * single-page app).
 */
export function trackApi(page: Page): { idle(quietMs?: number): Promise<void> } {
  let pending = 0;
  let changed = Date.now();
  const isApi = (r: PlaywrightRequest) => new URL(r.url()).pathname.startsWith('/api/');
  const ended = (r: PlaywrightRequest) => {
    if (!isApi(r)) return;
    pending--;
    changed = Date.now();
  };
  page.on('request', (r) => {
    if (!isApi(r)) return;
    pending++;
    changed = Date.now();
  });
  page.on('requestfinished', ended);
  page.on('requestfailed', ended);
  return {
    async idle(quietMs = 300) {
      for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 50))) {
        if (pending <= 0 && Date.now() - changed >= quietMs) return;
      }
      throw new Error(`${pending} API requests still in flight after 15 s`);
    },
  };
}

/** Follows a link of the main navigation; on a narrow screen the menu is opened from its button first. */
export async function goToSection(page: Page, section: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) {
    if ((await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  }
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: section, exact: true }).click();
}

export interface Tokens { accessToken: string; refreshToken: string }
/** What POST /agents/enroll returns. */
export interface Enrolled { deviceId: string; agentId: string; authToken: string }

/** The bootstrap admin with MFA turned on, signed in with a code (tenancy and key writes need it). */
export async function adminWithMfa(service: Service): Promise<string> {
  const first = await apiCall<Tokens>(service, 'POST', '/auth/login', ADMIN);
  const { secret } = await apiCall<{ secret: string }>(service, 'POST', '/auth/mfa/setup', undefined, first.accessToken);
  const totp = new TOTP({ secret });
  await apiCall(service, 'POST', '/auth/mfa/enable', { code: totp.generate() }, first.accessToken);
  const { mfaToken } = await apiCall<{ mfaToken: string }>(service, 'POST', '/auth/login', ADMIN);
  const verified = await apiCall<Tokens>(service, 'POST', '/auth/mfa/verify', { mfaToken, code: totp.generate({ timestamp: Date.now() + 30_000 }) });
  return verified.accessToken;
}

/** One agent heartbeat (the device turns online); returns the status. */
export async function heartbeat(service: Service, device: Enrolled): Promise<number> {
  const res = await fetch(`${service.url}/api/v1/agents/${device.agentId}/heartbeat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${device.authToken}` },
    body: JSON.stringify({ agentVersion: '1.0.0' }),
  });
  await res.body?.cancel();
  return res.status;
}
