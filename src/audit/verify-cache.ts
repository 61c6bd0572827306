// Chain verification on one instance: bounded, shared and remembered. At most `maxRuns` run at
// once (each holds worker threads and database reads for as long as its chain is long), and one
// per chain, so no single reader can hold them all; a call beyond that is refused with 429 and
// Retry-After before it touches the database, rather than queued, so waiting costs the service
// nothing. A call for a range that is being verified shares that run. The last result of each
// range is kept under the key it was computed with (the chain's head and anchor, and the versions
// of the rows it read), so a repeated call on an unchanged chain reads no row again, and any sealed
// row, retention run or rewrite, by any path, verifies afresh.
import { AppError } from '../errors.js';

// A run of a short chain ends within a second; a long one is worth one cheap call a second.
const RETRY_AFTER_SECONDS = 1;

/** Totals since the process started, for tests: verifications run, rows they checked, answers kept or refused. */
export const verifyCounters = { runs: 0, rows: 0, cached: 0, refused: 0, peakRuns: 0 };

/** Answers from the range's kept result when `key` matches it; otherwise verifies and keeps the result. */
export type Remembered<T> = (key: string, verify: () => Promise<T>) => Promise<T>;

/** `maxRanges`: how many ranges' results are kept, the least recently used dropped first. */
export function createVerifyCache<T extends { checked: number }>(options: { maxRuns: number; maxRanges: number }) {
  const running = new Map<string, { chain: string; promise: Promise<unknown> }>();
  const kept = new Map<string, { key: string; result: T }>();

  function keep(range: string, key: string, result: T): void {
    kept.delete(range); // re-inserted last: the map holds ranges least recently used first
    kept.set(range, { key, result });
    if (kept.size > options.maxRanges) kept.delete(kept.keys().next().value!);
  }

  function remembered(range: string): Remembered<T> {
    return async (key, verify) => {
      const last = kept.get(range);
      if (last?.key === key) {
        verifyCounters.cached++;
        keep(range, key, last.result);
        return last.result;
      }
      verifyCounters.runs++;
      const result = await verify();
      verifyCounters.rows += result.checked;
      keep(range, key, result);
      return result;
    };
  }

  return {
    /** `bounds`: the range asked for within `chain`. Throws RATE_LIMITED when no run may start. */
    answer<R>(chain: string, bounds: string, run: (remembered: Remembered<T>) => Promise<R>): Promise<R> {
      const range = `${chain}:${bounds}`;
      const shared = running.get(range);
      if (shared) return shared.promise as Promise<R>;
      const busy = running.size >= options.maxRuns ? `${options.maxRuns} chain verifications are running on this server`
        : [...running.values()].some((r) => r.chain === chain) ? 'Another range of this chain is being verified'
          : null;
      if (busy) {
        verifyCounters.refused++;
        throw new AppError('RATE_LIMITED', `${busy}; retry in ${RETRY_AFTER_SECONDS} second`, { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });
      }
      const promise = run(remembered(range)).finally(() => running.delete(range));
      running.set(range, { chain, promise });
      verifyCounters.peakRuns = Math.max(verifyCounters.peakRuns, running.size);
      return promise;
    },
  };
}
