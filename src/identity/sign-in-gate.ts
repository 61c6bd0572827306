// Per client address, on this instance: the sign-in attempts waiting for their turn, and until when
// the database last said the address is over its limit. Attempts from one address take turns here
// (the address lock would make them anyway, each holding a pooled connection while it waits), and
// once refused the address is answered from memory until a slot frees: a flood holds at most one
// connection, so other clients' sign-ins do not queue behind it for the pool.
import { AppError } from '../errors.js';

/** Throttled addresses each instance remembers, so that a flood is answered without the database. */
const THROTTLES_REMEMBERED = 10_000;

/** An attempt turned away: by its address's limit, or by its account's. */
export interface Refusal {
  refusedUntil: number;
  by: 'address' | 'account';
}

export const isRefusal = (outcome: object): outcome is Refusal => 'refusedUntil' in outcome;

/** `onRefused`: told of each attempt turned away, and by which limit (metrics). */
export function createSignInGate(now: () => number, onRefused?: (by: Refusal['by']) => void) {
  const turns = new Map<string, Promise<void>>();
  const throttledUntil = new Map<string, number>();

  function inTurn<T>(client: string, fn: () => Promise<T>): Promise<T> {
    const run = (turns.get(client) ?? Promise.resolve()).then(fn);
    const done = run.then(() => undefined, () => undefined);
    turns.set(client, done);
    void done.then(() => {
      if (turns.get(client) === done) turns.delete(client);
    });
    return run;
  }

  /** Until when the address is known to be over its limit; null when it is not (or no longer). */
  function remembered(client: string): number | null {
    const until = throttledUntil.get(client);
    return until !== undefined && until > now() ? until : null;
  }

  function remember(client: string, until: number): void {
    throttledUntil.delete(client);
    throttledUntil.set(client, until);
    // Bounded, oldest first: an address forgotten is only asked of the database again.
    if (throttledUntil.size > THROTTLES_REMEMBERED) throttledUntil.delete(throttledUntil.keys().next().value!);
  }

  return {
    remembered,

    /**
     * Runs `decide` (the transaction that reserves an attempt, and may settle it) in the address's
     * turn, unless the address is known to be over its limit. A refusal, remembered or decided, is
     * 429 with Retry-After; an address refusal is remembered before the next attempt takes its turn.
     */
    async admit<T extends object>(client: string, decide: () => Promise<T | Refusal>): Promise<T> {
      const known = remembered(client);
      const outcome = known !== null
        ? { refusedUntil: known, by: 'address' as const }
        : await inTurn(client, async (): Promise<T | Refusal> => {
          const since = remembered(client);
          if (since !== null) return { refusedUntil: since, by: 'address' };
          const decided = await decide();
          if (isRefusal(decided) && decided.by === 'address') remember(client, decided.refusedUntil);
          return decided;
        });
      if (isRefusal(outcome)) {
        onRefused?.(outcome.by);
        const retryAfter = Math.max(1, Math.ceil((outcome.refusedUntil - now()) / 1000));
        const from = outcome.by === 'account' ? 'for this account' : 'from this address';
        throw new AppError('RATE_LIMITED', `Too many failed sign-in attempts ${from}; try again in ${retryAfter} seconds`, {
          headers: { 'retry-after': String(retryAfter) },
        });
      }
      return outcome;
    },
  };
}
