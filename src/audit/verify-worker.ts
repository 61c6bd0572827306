// A worker thread of the verification pool (verify-pool.ts): one task at a time, until it is told
// to close. It verifies a range of a chain, or counts its row versions, on its own database
// connections (PostgreSQL), or hashes a batch of rows the main thread read (PGlite, where it has no
// connection).
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { connectPostgres } from '../db/database.js';
import { checkBatch, countVersions, verifyRange } from './chain-verifier.js';
import type { VerifyConnection, VerifyReply, VerifyRequest } from './verify-pool.js';

const { connection } = workerData as { connection: VerifyConnection | null };
// Background work: when cores are short, the event loop goes first. On Linux a nice value is per
// thread, so this lowers this thread alone; elsewhere it may lower the whole process: skip it there.
if (process.platform === 'linux') setPriority(10);
const port = parentPort!;
const db = connection ? connectPostgres({ url: connection.url, appRole: connection.appRole, poolSize: 2 }) : null;
db?.catch(() => {}); // a failed connection is reported to each request that needs it

port.on('message', async (request: VerifyRequest) => {
  if (request.type === 'close') {
    await (await db?.catch(() => null))?.close();
    port.close();
    return;
  }
  let reply: VerifyReply;
  try {
    reply = request.type === 'check'
      ? { ok: true, result: checkBatch(request.orgId, request.previous, request.rows) }
      : request.type === 'versions'
        ? { ok: true, result: await countVersions(await db!, request.scope, request.chainId, request.spans) }
        : { ok: true, result: await verifyRange(await db!, request.scope, request.job) };
  } catch (err) {
    reply = { ok: false, error: (err as Error).message };
  }
  port.postMessage(reply);
});
