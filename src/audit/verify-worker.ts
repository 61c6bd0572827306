// A worker thread verifying one range of a chain on its own database connection, so long chains
// are checked on several cores: decoding and hashing rows is CPU-bound.
import { parentPort, workerData } from 'node:worker_threads';
import { connectPostgres } from '../db/database.js';
import type { TenantScope } from '../db/tenant-scope.js';
import { verifyRange, type RangeJob } from './chain-verifier.js';

const { connection, scope, job } = workerData as { connection: { url: string; appRole: string }; scope: TenantScope; job: RangeJob };
const db = await connectPostgres({ url: connection.url, appRole: connection.appRole, poolSize: 2 });
try {
  parentPort!.postMessage({ ok: true, result: await verifyRange(db, scope, job) });
} catch (err) {
  parentPort!.postMessage({ ok: false, error: (err as Error).message });
} finally {
  await db.close();
}
