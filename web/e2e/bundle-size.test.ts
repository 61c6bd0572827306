// The console's first load stays under its budget (250 KB of gzipped JavaScript): the
// scripts index.html loads or preloads, gzipped as a server would send them.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ROOT } from './harness.js';

const DIST = path.join(ROOT, 'web', 'dist');
const BUDGET_BYTES = 250 * 1024;

/** Gzipped bytes of the JavaScript a browser fetches before the console's first screen. */
export function firstLoadGzipBytes(dist = DIST): number {
  const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="\/([^"]+\.js)"/g)].map((m) => m[1]!);
  assert.ok(scripts.length > 0, 'index.html loads a script');
  return scripts.reduce((sum, file) => sum + gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length, 0);
}

const built = existsSync(path.join(DIST, 'index.html'));
if (!built && process.env.CI) throw new Error('the console is not built: npm ci runs npm run build:web');

it('the console loads at most 250 KB of gzipped JavaScript at first', { skip: built ? false : 'the console is not built' }, () => {
  const bytes = firstLoadGzipBytes();
  assert.ok(bytes < BUDGET_BYTES, `first load is ${(bytes / 1024).toFixed(1)} KB gzipped, over the 250 KB budget`);
});
