// Starts and stops the background workers: the audit sealer and checkpoints, retention, identity
// housekeeping, the API-key usage flush, the verify pool, the outbound event sender and the agent
// sockets. Stopping writes what is still in memory (usage counts, pending audit rows) before the
// database goes.
import type { Modules } from './modules.js';

export interface RunningWorkers {
  /** Closes agent sockets first on shutdown, so agents reconnect elsewhere while the rest winds down. */
  closeSockets(): Promise<void>;
  stop(): Promise<void>;
}

export function startWorkers(workers: Modules['workers']): RunningWorkers {
  const { sealer, checkpoints, retention, housekeeping, usage, verifyPool, gateway, eventSender } = workers;
  sealer.start();
  checkpoints.start();
  usage.start();
  housekeeping.start();
  retention.start();
  eventSender.start();
  return {
    closeSockets: () => gateway.close(),
    async stop() {
      await eventSender.stop();
      await usage.stop();
      await housekeeping.stop();
      await retention.stop();
      await checkpoints.stop();
      await sealer.stop();
      // Seal what is pending (best effort: another instance or the next start seals the rest).
      await sealer.sealNow().catch(() => {});
      await verifyPool?.close();
    },
  };
}
