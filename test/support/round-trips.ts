// Counts what a request asks of the database: its transactions and the statements inside them.
// A transaction costs two round trips of its own (BEGIN with the tenant scope, and COMMIT), each
// statement one more. Only work started inside `measure` is counted (AsyncLocalStorage), so the
// service's timers (usage flushes, the sealer) never land in a request's figures.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from '../../src/db/database.js';

export interface RoundTrips {
  transactions: number;
  statements: number;
  /** transactions × 2 + statements */
  roundTrips: number;
}

export interface CountingDatabase {
  db: Database;
  /** Runs fn and counts the transactions and statements it started. */
  measure<T>(fn: () => Promise<T>): Promise<{ result: T; counts: RoundTrips }>;
}

export function countingDatabase(inner: Database): CountingDatabase {
  const current = new AsyncLocalStorage<{ transactions: number; statements: number }>();
  const db: Database = {
    ...inner,
    transaction(fn, options) {
      const counts = current.getStore();
      if (counts) counts.transactions++;
      return inner.transaction(
        (tx) =>
          fn({
            query(text, params, queryOptions) {
              if (counts) counts.statements++;
              return tx.query(text, params, queryOptions);
            },
            afterCommit: (cb) => tx.afterCommit(cb),
          }),
        options,
      );
    },
    privilegedTransaction: (role, fn) => inner.privilegedTransaction(role, fn),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return {
    db,
    async measure(fn) {
      const counts = { transactions: 0, statements: 0 };
      // Awaited inside run(): a lazy thenable (app.inject) only starts when awaited, and must start here.
      const result = await current.run(counts, async () => await fn());
      return { result, counts: { ...counts, roundTrips: counts.transactions * 2 + counts.statements } };
    },
  };
}
