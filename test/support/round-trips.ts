// Counts what a request asks of the database: its transactions and the statements inside them.
// A transaction costs one round trip of its own (COMMIT: BEGIN and the tenant scope are written
// with its first statement), each statement one more. Only work started inside `measure` is
// counted (AsyncLocalStorage), so the service's timers (usage flushes, the sealer) never land in a
// request's figures; work a request leaves for after its answer (a mail to send) is counted whole,
// waited for before the figures are read.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from '../../src/db/database.js';

export interface RoundTrips {
  transactions: number;
  statements: number;
  /** transactions + statements */
  roundTrips: number;
}

export interface CountingDatabase {
  db: Database;
  /** Runs fn and counts the transactions and statements it started. */
  measure<T>(fn: () => Promise<T>): Promise<{ result: T; counts: RoundTrips }>;
}

export function countingDatabase(inner: Database): CountingDatabase {
  const current = new AsyncLocalStorage<{ transactions: number; statements: number; running: Promise<unknown>[] }>();
  const db: Database = {
    ...inner,
    transaction(fn, options) {
      const counts = current.getStore();
      if (counts) counts.transactions++;
      const running = inner.transaction(
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
      const counts = { transactions: 0, statements: 0, running: [] as Promise<unknown>[] };
      // Awaited inside run(): a lazy thenable (app.inject) only starts when awaited, and must start here.
      const result = await current.run(counts, async () => await fn());
      while (counts.running.length > 0) await Promise.all(counts.running.splice(0));
      const { transactions, statements } = counts;
      return { result, counts: { transactions, statements, roundTrips: transactions + statements } };
    },
  };
}
