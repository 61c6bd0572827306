// Worker threads for the offline verifier: parsing and hashing rows is CPU-bound, and a file's
// chunks are independent (links are checked afterwards, in any order; chain-links.ts). The pool
// starts on first use and stays for later calls; a thread is held (ref'd) only while it has work,
// so the pool never keeps the process alive. Threads take a chunk once they are ready and have
// fewer than two queued; until then the caller checks chunks itself, so a cold start costs nothing.
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-thread.js';
import type { Checked, LineFormat } from './row-check.js';

const QUEUE_PER_THREAD = 2;

export interface ChunkResult {
  /** Lines in the chunk. */
  lines: number;
  /** Results with line numbers counted from 0 within the chunk. */
  rows: Checked[];
}

interface Thread {
  worker: Worker;
  ready: boolean;
  queued: number;
}

export interface WorkerPool {
  readonly size: number;
  /** A chunk for a thread that is ready and not full; null: none is, check it yourself. */
  check(format: LineFormat, chunk: Buffer): Promise<ChunkResult> | null;
  terminate(): Promise<void>;
}

let shared: WorkerPool | null = null;

/** Threads besides the caller's own, which checks chunks too. */
export function defaultThreads(): number {
  return Math.max(1, Math.min(os.availableParallelism() - 1, 7));
}

function createPool(size: number): WorkerPool {
  let nextId = 0;
  const waiting = new Map<number, { resolve: (r: ChunkResult) => void; reject: (e: Error) => void; thread: Thread }>();
  const fail = (err: Error) => {
    if (shared === pool) shared = null; // a broken pool is not reused
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const threads: Thread[] = Array.from({ length: size }, () => {
    const worker = startWorker(import.meta.url, 'row-worker');
    const thread: Thread = { worker, ready: false, queued: 0 };
    worker.on('message', (message: (ChunkResult & { id: number }) | { ready: true }) => {
      if ('ready' in message) {
        thread.ready = true;
        return;
      }
      const w = waiting.get(message.id);
      if (!w) return;
      waiting.delete(message.id);
      if (--thread.queued === 0) worker.unref();
      w.resolve({ lines: message.lines, rows: message.rows });
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`verifier worker exited with ${code}`)));
    // After the listeners (adding one refs the thread again).
    worker.unref();
    return thread;
  });
  const pool: WorkerPool = {
    size,
    async terminate() {
      if (shared === pool) shared = null;
      for (const t of threads) t.worker.removeAllListeners('exit');
      await Promise.all(threads.map((t) => t.worker.terminate()));
    },
    check(format, chunk) {
      let thread: Thread | null = null;
      for (const t of threads) if (t.ready && t.queued < QUEUE_PER_THREAD && (!thread || t.queued < thread.queued)) thread = t;
      if (!thread) return null;
      if (thread.queued++ === 0) thread.worker.ref();
      const id = nextId++;
      const bytes = new Uint8Array(chunk); // a copy, moved (not cloned) to the thread
      const target = thread;
      return new Promise<ChunkResult>((resolve, reject) => {
        waiting.set(id, { resolve, reject, thread: target });
        target.worker.postMessage({ id, format, bytes }, [bytes.buffer]);
      });
    },
  };
  return pool;
}

/** The shared pool, started on first use. */
export function workerPool(size = defaultThreads()): WorkerPool {
  if (shared && shared.size !== size) void shared.terminate();
  shared ??= createPool(size);
  return shared;
}
