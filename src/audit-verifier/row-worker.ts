// A worker thread of the offline verifier: checks the lines of one chunk of an export file (parse,
// canonical payload, SHA-256) and hands back the small per-row results. See worker-pool.ts.
import { parentPort } from 'node:worker_threads';
import { checkLines, type Checked, type LineFormat } from './row-check.js';

parentPort!.on('message', (job: { id: number; format: LineFormat; bytes: Uint8Array }) => {
  const rows: Checked[] = [];
  const lines = checkLines(job.format, Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength), 0, rows);
  parentPort!.postMessage({ id: job.id, lines, rows });
});
parentPort!.postMessage({ ready: true });
