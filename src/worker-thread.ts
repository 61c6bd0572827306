// Starting a worker thread on a module that sits beside the caller, whether the service runs from
// TypeScript (tsx) or from compiled JavaScript.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `callerUrl`: the caller's `import.meta.url`; `name`: the module's file name without extension. */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const url = new URL(`./${name}${path.extname(fileURLToPath(callerUrl))}`, callerUrl);
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  // Under tsx a worker thread has no loader until it registers one itself.
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
