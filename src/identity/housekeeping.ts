// Removes what sign-in leaves behind once it can no longer matter: sessions that ended (expired or
// revoked) more than a week ago, with their refresh tokens, and sign-in attempts older than a day
// (the limits, per e-mail and per client address, count 15 minutes; failures for unknown e-mails
// are recorded only there, never in the audit chain), and likewise "forgot password" requests and
// reset tokens a day after they expired or were used. Spent refresh tokens of a live session stay:
// presenting one again is how a stolen copy is detected (API.md §3). Audit rows are not touched;
// they have their own retention. Deletes in bounded batches, so no run holds locks for long.
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import * as sessions from './sessions.repo.js';
import * as resets from './password-resets.repo.js';

export const ENDED_SESSION_GRACE_MS = 7 * 24 * 3600 * 1000;
export const ATTEMPT_KEEP_MS = 24 * 3600 * 1000;
const BATCH = 5000;
const INTERVAL_MS = 60 * 60 * 1000;

export interface HousekeepingResult {
  sessions: number;
  loginAttempts: number;
  /** "Forgot password" requests (their own limit counts 15 minutes), kept a day like sign-in attempts. */
  resetRequests: number;
  /** Reset tokens a day after they expired, were used or were voided. */
  resetTokens: number;
}

export function createIdentityHousekeeping(deps: { db: Database; now: () => number; log: (err: unknown, message: string) => void }) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  async function deleteAll(remove: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    let removed: number;
    do {
      removed = await remove(BATCH);
      total += removed;
    } while (removed === BATCH);
    return total;
  }

  async function runOnce(): Promise<HousekeepingResult> {
    const now = deps.now();
    const system = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(deps.db, SYSTEM_SCOPE, fn);
    return {
      sessions: await deleteAll((limit) => system((tx) => sessions.deleteEndedSessions(tx, new Date(now - ENDED_SESSION_GRACE_MS), limit))),
      loginAttempts: await deleteAll((limit) => system((tx) => sessions.deleteAttemptsBefore(tx, new Date(now - ATTEMPT_KEEP_MS), limit))),
      resetRequests: await deleteAll((limit) => system((tx) => resets.deleteResetRequestsBefore(tx, new Date(now - ATTEMPT_KEEP_MS), limit))),
      resetTokens: await deleteAll((limit) => system((tx) => resets.deleteEndedResetTokens(tx, new Date(now - ATTEMPT_KEEP_MS), limit))),
    };
  }

  return {
    runOnce,

    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = runOnce()
          .catch((err: unknown) => deps.log(err, 'identity housekeeping failed'))
          .finally(() => (running = null));
      }, INTERVAL_MS).unref();
    },

    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}

export type IdentityHousekeeping = ReturnType<typeof createIdentityHousekeeping>;
