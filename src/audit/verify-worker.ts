// A worker thread of the verification pool (verify-pool.ts): verifies one range of a chain at a
// time on its own database connections, until it is told to close.
import { parentPort, workerData } from 'node:worker_threads';
import { connectPostgres } from '../db/database.js';
import { verifyRange } from './chain-verifier.js';
import type { VerifyConnection, VerifyReply, VerifyRequest } from './verify-pool.js';

const { connection } = workerData as { connection: VerifyConnection };
const port = parentPort!;
const db = connectPostgres({ url: connection.url, appRole: connection.appRole, poolSize: 2 });
db.catch(() => {}); // a failed connection is reported to each request that needs it

port.on('message', async (request: VerifyRequest) => {
  if (request.type === 'close') {
    await (await db.catch(() => null))?.close();
    port.close();
    return;
  }
  let reply: VerifyReply;
  try {
    reply = { ok: true, result: await verifyRange(await db, request.scope, request.job) };
  } catch (err) {
    reply = { ok: false, error: (err as Error).message };
  }
  port.postMessage(reply);
});
