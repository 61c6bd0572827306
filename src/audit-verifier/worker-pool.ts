// Worker threads for the offline verifier: parsing and hashing rows is CPU-bound, and a file's
// chunks are independent (links are checked afterwards, in any order; chain-links.ts). The pool
// starts on first use and stays for later calls (its threads are unref'd, so it never keeps the
// process alive); chunks are handed out to whichever thread has the least queued.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Checked, LineFormat } from './row-check.js';

const WORKER_URL = new URL(`./row-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
// Running from TypeScript (tsx), a worker thread has no loader until it registers one itself.
const WORKER_BOOTSTRAP = WORKER_URL.pathname.endsWith('.ts')
  ? `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(WORKER_URL.href)}); })`
  : null;

export interface ChunkResult {
  /** Lines in the chunk. */
  lines: number;
  /** Results with line numbers counted from 0 within the chunk. */
  rows: Checked[];
}

interface Thread {
  worker: Worker;
  queued: number;
}

export interface WorkerPool {
  readonly size: number;
  check(format: LineFormat, chunk: Buffer): Promise<ChunkResult>;
  terminate(): Promise<void>;
}

let pool: WorkerPool | null = null;

export function defaultThreads(): number {
  return Math.max(1, Math.min(os.availableParallelism(), 8));
}

function createPool(size: number): WorkerPool {
  let nextId = 0;
  const waiting = new Map<number, { resolve: (r: ChunkResult) => void; reject: (e: Error) => void; thread: Thread }>();
  const fail = (err: Error) => {
    pool = null; // a broken pool is not reused
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const threads: Thread[] = Array.from({ length: size }, () => {
    const worker = WORKER_BOOTSTRAP ? new Worker(WORKER_BOOTSTRAP, { eval: true }) : new Worker(WORKER_URL);
    const thread = { worker, queued: 0 };
    worker.on('message', (message: ChunkResult & { id: number }) => {
      const w = waiting.get(message.id);
      if (!w) return;
      waiting.delete(message.id);
      if (--w.thread.queued === 0) w.thread.worker.unref();
      w.resolve({ lines: message.lines, rows: message.rows });
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`verifier worker exited with ${code}`)));
    // Held only while it has work (after the listeners: adding one refs the thread again).
    worker.unref();
    return thread;
  });
  return {
    size,
    async terminate() {
      for (const t of threads) t.worker.removeAllListeners('exit');
      await Promise.all(threads.map((t) => t.worker.terminate()));
    },
    check(format, chunk) {
      const thread = threads.reduce((a, b) => (b.queued < a.queued ? b : a));
      if (thread.queued++ === 0) thread.worker.ref();
      const id = nextId++;
      // A copy of the chunk's bytes, moved (not cloned) to the thread.
      const bytes = new Uint8Array(chunk);
      return new Promise<ChunkResult>((resolve, reject) => {
        waiting.set(id, { resolve, reject, thread });
        thread.worker.postMessage({ id, format, bytes }, [bytes.buffer]);
      });
    },
  };
}

/** The shared pool, started on first use. */
export function workerPool(size = defaultThreads()): WorkerPool {
  if (pool && pool.size !== size) {
    void pool.terminate();
    pool = null;
  }
  pool ??= createPool(size);
  return pool;
}
