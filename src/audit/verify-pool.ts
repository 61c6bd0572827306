// Worker threads that keep chain verification off the event loop. On PostgreSQL each verifies
// ranges on its own database connections, so /verify of a long chain uses several cores; on PGlite
// (no connection: the database lives on the main thread) each hashes batches of rows it is sent.
// The threads stay warm between calls (starting one costs about half a second under tsx) and exit
// after a quiet spell, so an idle service holds no extra heap. At most `size` tasks run at once;
// more wait.
import type { Worker } from 'node:worker_threads';
import type { TenantScope } from '../db/tenant-scope.js';
import type { ChainLinkRow } from './audit.repo.js';
import { startWorker } from '../worker-thread.js';
import type { BatchResult, Link, RangeJob, RangeResult } from './chain-verifier.js';

// A worker holds two batches of rows at a time: a small heap keeps the service's memory flat
// (the collector runs sooner instead of the heap growing to V8's default).
const WORKER_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 };

export interface VerifyConnection {
  url: string;
  appRole: string;
}

/** The row versions of a chain's seq spans (afterSeq, toSeq], summed: see repo.chainRowVersions. */
export interface RowVersions {
  rows: number;
  xminSum: string;
}

/** What a worker is sent, and what it answers. */
export type VerifyTask =
  | { type: 'verify'; scope: TenantScope; job: RangeJob }
  | { type: 'check'; orgId: string | null; previous: Link | null; rows: ChainLinkRow[] }
  | { type: 'versions'; scope: TenantScope; chainId: string; spans: [afterSeq: number, toSeq: number][] };
export type VerifyRequest = VerifyTask | { type: 'close' };
type TaskResult = RangeResult | BatchResult | RowVersions;
export type VerifyReply = { ok: true; result: TaskResult } | { ok: false; error: string };

interface Task {
  request: VerifyTask;
  resolve(result: TaskResult): void;
  reject(err: Error): void;
}

interface PooledWorker {
  worker: Worker;
  task: Task | null;
  idleTimer: NodeJS.Timeout | null;
}

/** `connection`: null on PGlite, where workers only hash the batches they are sent. */
export function createVerifyPool(options: { connection: VerifyConnection | null; size: number; idleMs: number }) {
  const workers = new Set<PooledWorker>();
  const queue: Task[] = [];
  let closed = false;

  function spawn(): PooledWorker {
    const worker = startWorker(import.meta.url, 'verify-worker', { workerData: { connection: options.connection }, resourceLimits: WORKER_LIMITS });
    const pooled: PooledWorker = { worker, task: null, idleTimer: null };
    worker.on('message', (reply: VerifyReply) => {
      const task = pooled.task;
      pooled.task = null;
      if (closed) return;
      if (reply.ok) {
        task?.resolve(reply.result);
        return next(pooled);
      }
      task?.reject(new Error(`chain verification failed: ${reply.error}`));
      // Its connections may be what failed: the next range gets a fresh worker.
      retire(pooled);
      drain();
    });
    // A crashed worker fails its range (the request gets an error, never a partial "valid") and leaves the pool.
    const fail = (err: Error) => {
      workers.delete(pooled);
      if (pooled.idleTimer) clearTimeout(pooled.idleTimer);
      pooled.task?.reject(err);
      pooled.task = null;
      drain();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`chain verification worker exited with ${code}`)));
    workers.add(pooled);
    return pooled;
  }

  function run(pooled: PooledWorker, task: Task): void {
    if (pooled.idleTimer) clearTimeout(pooled.idleTimer);
    pooled.idleTimer = null;
    pooled.task = task;
    pooled.worker.ref(); // held while it has work: the caller is waiting for it
    pooled.worker.postMessage(task.request satisfies VerifyRequest);
  }

  /** A worker just finished: give it the next range, or let it idle until it retires. */
  function next(pooled: PooledWorker): void {
    const task = queue.shift();
    if (task) return run(pooled, task);
    pooled.worker.unref(); // a warm worker never keeps the process alive
    pooled.idleTimer = setTimeout(() => retire(pooled), options.idleMs);
    pooled.idleTimer.unref();
  }

  function retire(pooled: PooledWorker): void {
    workers.delete(pooled);
    pooled.worker.removeAllListeners('exit');
    pooled.worker.postMessage({ type: 'close' } satisfies VerifyRequest);
  }

  /** Starts queued ranges on idle workers, spawning up to the pool's size. */
  function drain(): void {
    while (queue.length > 0 && !closed) {
      const idle = [...workers].find((w) => w.task === null);
      if (idle) run(idle, queue.shift()!);
      else if (workers.size < options.size) run(spawn(), queue.shift()!);
      else return;
    }
  }

  function submit(request: VerifyTask): Promise<TaskResult> {
    if (closed) return Promise.reject(new Error('the verification pool is closed'));
    return new Promise((resolve, reject) => {
      queue.push({ request, resolve, reject });
      drain();
    });
  }

  return {
    size: options.size,

    /** Worker threads alive now, busy or warm. */
    liveWorkers: () => workers.size,

    /** Verifies a range on the worker's own connections (PostgreSQL only). */
    verify(scope: TenantScope, job: RangeJob): Promise<RangeResult> {
      if (!options.connection) return Promise.reject(new Error('the verification pool has no database connection'));
      return submit({ type: 'verify', scope, job }) as Promise<RangeResult>;
    },

    /** Counts the row versions of seq spans of a chain on the worker's own connections (PostgreSQL only). */
    versions(scope: TenantScope, chainId: string, spans: [number, number][]): Promise<RowVersions> {
      if (!options.connection) return Promise.reject(new Error('the verification pool has no database connection'));
      return submit({ type: 'versions', scope, chainId, spans }) as Promise<RowVersions>;
    },

    /** Hashes rows read elsewhere, in seq order after `previous`, up to the first broken link. */
    check(orgId: string | null, previous: Link | null, rows: ChainLinkRow[]): Promise<BatchResult> {
      return submit({ type: 'check', orgId, previous, rows }) as Promise<BatchResult>;
    },

    /** Stops every worker: idle ones close their connections; ranges still running or queued fail. */
    async close(): Promise<void> {
      closed = true;
      for (const task of queue.splice(0)) task.reject(new Error('the verification pool is closed'));
      await Promise.all([...workers].map(async (pooled) => {
        workers.delete(pooled);
        if (pooled.idleTimer) clearTimeout(pooled.idleTimer);
        pooled.worker.removeAllListeners('exit');
        const exited = new Promise((resolve) => pooled.worker.once('exit', resolve));
        if (pooled.task) {
          pooled.task.reject(new Error('the verification pool is closed'));
          await pooled.worker.terminate();
        } else {
          pooled.worker.postMessage({ type: 'close' } satisfies VerifyRequest);
          const timer = setTimeout(() => void pooled.worker.terminate(), 2000);
          await exited;
          clearTimeout(timer);
        }
      }));
    },
  };
}

export type VerifyPool = ReturnType<typeof createVerifyPool>;
