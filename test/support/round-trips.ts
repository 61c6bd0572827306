// Counts what a request asks of the database: its transactions and the statements inside them.
// Each statement is a round trip, and so is each COMMIT waited for (BEGIN and the tenant scope are
// written with a transaction's first statement, a statement queued by queryLater with the next
// statement or the COMMIT; a read-only transaction has no COMMIT at all). Only work started
// inside `measure` is counted (AsyncLocalStorage), so the service's timers (usage flushes, the
// sealer) never land in a request's figures; work a request leaves for after its answer (a mail to
// send) is counted whole, waited for before the figures are read.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from '../../src/db/database.js';

export interface RoundTrips {
  transactions: number;
  statements: number;
  /**
   * Statements, less those queued to go with the next write (queryLater), plus the COMMITs waited
   * for: one per transaction that made a statement, unless it was read-only (it has none).
   */
  roundTrips: number;
}

export interface CountingDatabase {
  db: Database;
  /** Runs fn and counts the transactions and statements it started. */
  measure<T>(fn: () => Promise<T>): Promise<{ result: T; counts: RoundTrips }>;
}

export function countingDatabase(inner: Database): CountingDatabase {
  const current = new AsyncLocalStorage<{ transactions: number; statements: number; sentLater: number; commits: number; running: Promise<unknown>[] }>();
  const db: Database = {
    ...inner,
    transaction(fn, options) {
      const counts = current.getStore();
      if (counts) counts.transactions++;
      let made = 0;
      const running = inner.transaction(
        async (tx) => {
          const result = await fn({
            query(text, params, queryOptions) {
              made++;
              if (counts) counts.statements++;
              return tx.query(text, params, queryOptions);
            },
            queryLater(text, params) {
              made++;
              if (counts) {
                counts.statements++;
                counts.sentLater++;
              }
              tx.queryLater(text, params);
            },
            afterCommit: (cb) => tx.afterCommit(cb),
          });
          if (counts && made > 0 && !options?.readOnly) counts.commits++;
          return result;
        },
        options,
      );
      counts?.running.push(running.catch(() => {}));
      return running;
    },
    privilegedTransaction: (role, fn) => inner.privilegedTransaction(role, fn),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return {
    db,
    async measure(fn) {
      const counts = { transactions: 0, statements: 0, sentLater: 0, commits: 0, running: [] as Promise<unknown>[] };
      // Awaited inside run(): a lazy thenable (app.inject) only starts when awaited, and must start here.
      const result = await current.run(counts, async () => await fn());
      while (counts.running.length > 0) await Promise.all(counts.running.splice(0));
      const { transactions, statements, sentLater, commits } = counts;
      return { result, counts: { transactions, statements, roundTrips: statements - sentLater + commits } };
    },
  };
}
