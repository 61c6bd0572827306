// The real process, as the README starts it: boots on the embedded database with no environment,
// prints the bootstrap admin once, refuses bad production config, and exits cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../test/support/free-port.js';

const ROOT = path.resolve(import.meta.dirname, '..');

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe('the service process', () => {
  it('starts on the embedded database with no configuration and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const proc = start({ DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dms-main-')), PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        if ((await fetch(`${base}/readyz`)).ok) break;
      } catch {
        // not up yet
      }
      assert.ok(Date.now() < deadline, `not ready: ${JSON.stringify(proc.output())}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const password = /Password: (\S+)/.exec(proc.output().stdout)?.[1];
    assert.ok(password, 'the generated admin password is printed once');
    const login = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@localhost', password }),
    });
    assert.equal(login.status, 200);
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
  });

  it('refuses to start in production without JWT_SECRET, saying so', async () => {
    const proc = start({ NODE_ENV: 'production', DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dms-main-')) });
    assert.equal(await proc.exited, 1);
    assert.match(proc.output().stderr, /configuration error: JWT_SECRET is required when NODE_ENV=production/);
  });
});
