// `npm run bench`: runs every bench/*.bench.ts (or those named on the command line), prints the
// table and writes it to bench/results/latest.json.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DURATION_S, ROOT, RUNS, type Row } from './harness.js';

const only = process.argv.slice(2);
const files = readdirSync(path.join(ROOT, 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((name) => f.startsWith(name)))
  .sort();

const rows: Row[] = [];
for (const file of files) {
  const bench = (await import(path.join(ROOT, 'bench', file))) as { name: string; run(): Promise<Row[]> };
  process.stderr.write(`running ${bench.name} (${RUNS} runs of ${DURATION_S} s per measurement)…\n`);
  rows.push(...(await bench.run()));
}

const fmt = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));
const table = [
  ['name', 'figure', 'unit', 'baseline', 'ratio', 'target', 'pass'],
  ...rows.map((r) => [r.name, fmt(r.figure), r.unit, fmt(r.baseline), fmt(r.ratio), r.target ?? '', r.pass === undefined ? '' : r.pass ? 'yes' : 'NO']),
];
const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
for (const row of table) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}\n`);

mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(
  path.join(ROOT, 'bench', 'results', 'latest.json'),
  JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, runs: RUNS, durationSeconds: DURATION_S, rows }, null, 2),
);
