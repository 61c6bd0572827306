// How a transaction goes to PostgreSQL on a pooled connection (postgres.ts opens the pools): every
// statement prepared (named after its text) and pipelined, BEGIN and the tenant scope sent with the
// first statement and an audit entry with the COMMIT, under that statement's Sync (one answer per
// write); reads with no BEGIN or COMMIT at all, each statement with its scope in one implicit
// transaction.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import { classify, runAfterCommit, type Transaction, type TransactionOptions } from './connection.js';

/**
 * Per connection, the statements it has prepared. Bounded: a statement whose text embeds values
 * (none should) would otherwise prepare a new statement per call for the connection's life.
 */
const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();
const MAX_PREPARED_PER_CONNECTION = 256;
// Statement text to name, so a hot statement is hashed once per process, not once per call.
const namesByText = new Map<string, string>();

function nameOf(text: string): string {
  let name = namesByText.get(text);
  if (!name) {
    name = `s_${createHash('sha1').update(text).digest('base64url')}`;
    if (namesByText.size < 4096) namesByText.set(text, name);
  }
  return name;
}

function preparedSet(client: pg.PoolClient): Set<string> {
  let prepared = preparedOn.get(client);
  if (!prepared) preparedOn.set(client, (prepared = new Set()));
  return prepared;
}

function statementName(client: pg.PoolClient, text: string): string | undefined {
  const name = nameOf(text);
  const prepared = preparedSet(client);
  if (prepared.has(name)) return name;
  if (prepared.size >= MAX_PREPARED_PER_CONNECTION) return undefined;
  prepared.add(name);
  return name;
}

// pg's own mapping of a value to its wire text (dates, JSON, buffers, arrays), for preludes' values.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

/** The connection's socket, corked while one write's messages are queued (one syscall, one packet). */
function socketOf(client: pg.PoolClient): { cork(): void; uncork(): void } | null {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  return stream?.cork && stream.uncork ? (stream as { cork(): void; uncork(): void }) : null;
}

/**
 * pg's own Query, with the internals a read with preludes extends (below): pg's documented way of
 * sending something of one's own is a Query (its pipeline mode refuses other submittables).
 */
interface PgConnection {
  bind(config: { statement: string; values: unknown[]; valueMapper: (value: unknown) => unknown }): void;
  execute(config: { portal: string }): void;
}
interface PgQuery {
  prepare(connection: PgConnection): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: PgConnection): void;
}
const PgQueryClass = pg.Query as unknown as new (config: pg.QueryConfig, values: undefined, callback: (err: Error | null, result: pg.QueryResult) => void) => PgQuery;

/**
 * A statement prepared on a connection and run for its effect alone, ahead of another under the
 * same Sync: the tenant scope, the plan mode, a write's BEGIN, the audit entries queued for its COMMIT.
 */
interface Prelude {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * A statement with its preludes: Bind and Execute of each prelude, then the statement as pg sends
 * it (Parse when new, Bind, Describe, Execute), then one Sync, so PostgreSQL answers them all in one
 * write. Outside a transaction block (a read) PostgreSQL runs what comes before a Sync as one
 * implicit transaction, so what a prelude sets transaction-locally (the scope) holds for the
 * statement and is gone with the Sync, committed or rolled back. The first to fail is the error,
 * and nothing after it runs. The preludes' answers come first and are dropped.
 */
class StatementWithPreludes extends PgQueryClass {
  readonly #preludes: readonly Prelude[];
  #answered = 0;

  constructor(config: pg.QueryConfig, preludes: readonly Prelude[], callback: (err: Error | null, result: pg.QueryResult) => void) {
    // 'extended': always Parse/Bind/Execute, never a simple Query message, which would commit the
    // implicit transaction (and the scope with it) before the statement ran. A literal of one shape,
    // not a spread of the caller's: cloning configs of varying shapes took 3% of a device list.
    const { text, values, name, rowMode } = config as pg.QueryConfig & { rowMode?: 'array' };
    super({ text, values, name, rowMode, queryMode: 'extended' } as pg.QueryConfig, undefined, callback);
    this.#preludes = preludes;
  }

  override prepare(connection: PgConnection): void {
    for (const prelude of this.#preludes) {
      connection.bind({ statement: prelude.name, values: prelude.values, valueMapper: prepareValue });
      connection.execute({ portal: '' });
    }
    super.prepare(connection);
  }

  override handleDataRow(message: unknown): void {
    if (this.#answered === this.#preludes.length) super.handleDataRow(message);
  }

  override handleCommandComplete(message: unknown, connection: PgConnection): void {
    if (this.#answered < this.#preludes.length) this.#answered++;
    else super.handleCommandComplete(message, connection);
  }

  /** Whether the statement itself ran (after a failure: false when a prelude was the one that failed). */
  get reachedStatement(): boolean {
    return this.#answered === this.#preludes.length;
  }
}

/** Sends `config` after `preludes` under one Sync; the promise is the statement's answer. */
function sendWithPreludes(client: pg.PoolClient, config: pg.QueryConfig, preludes: readonly Prelude[]): { answer: Promise<pg.QueryResult>; query: StatementWithPreludes } {
  let query!: StatementWithPreludes;
  const answer = new Promise<pg.QueryResult>((resolve, reject) => {
    query = new StatementWithPreludes(config, preludes, (err, result) => (err ? reject(err) : resolve(result)));
    client.query(query as unknown as pg.QueryConfig);
  });
  return { answer, query };
}

/**
 * Whether the connection has the prelude prepared, or its Parse already on the way ahead of what
 * comes next (pg's own bookkeeping of named statements): only then can it go as a prelude, which
 * is bound, never parsed.
 */
function connectionHas(client: pg.PoolClient, prelude: Prelude): boolean {
  const { parsedStatements, submittedNamedStatements } = (client as unknown as {
    connection: { parsedStatements: Record<string, string>; submittedNamedStatements: Record<string, string> };
  }).connection;
  return parsedStatements[prelude.name] === prelude.text || submittedNamedStatements[prelude.name] === prelude.text;
}

/**
 * Named like any statement (the scope's is the one write transactions send too), and prepared
 * whatever the connection's bound: a read cannot go without it.
 */
function prelude(text: string, values: unknown[]): Prelude {
  return { name: nameOf(text), text, values };
}
const CUSTOM_PLANS = prelude(`select set_config('plan_cache_mode', 'force_custom_plan', true)`, []);
// A write transaction's ends, named so that, once prepared, they can go as preludes or with them.
const BEGIN = prelude('BEGIN READ WRITE', []);
const COMMIT: pg.QueryConfig = { name: nameOf('COMMIT'), text: 'COMMIT', values: [] };

// pg-pool listens for errors only on idle clients: a connection that dies while checked out (a
// restart of PostgreSQL between two statements) would otherwise emit an unhandled 'error' and end
// the process. The statement in progress, if any, fails by itself. One listener for every
// connection, not a closure per checkout (under tsx each closure made costs a defineProperty).
const brokenWhileOut = new WeakSet<pg.PoolClient>();
function markBroken(this: pg.PoolClient): void {
  brokenWhileOut.add(this);
}

/** A connection checked out of `pool`, watched for dying while out. */
async function checkOut(pool: pg.Pool): Promise<{ client: pg.PoolClient; release(destroy?: boolean): void }> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw classify(err);
  }
  client.on('error', markBroken);
  return {
    client,
    release(destroy = false) {
      client.removeListener('error', markBroken);
      client.release(destroy || brokenWhileOut.delete(client));
    },
  };
}

/**
 * A transaction that only reads (TransactionOptions.readOnly), with no BEGIN and no COMMIT: each
 * statement goes out with the setup (the tenant scope) ahead of it and a Sync after both, one
 * implicit transaction (StatementWithPreludes), one write and one answer. Request connections are
 * read-only by default (default_transaction_read_only; write transactions begin READ WRITE), so a
 * write in one fails. Its statements do not share a snapshot: under READ COMMITTED, the service's
 * level, the statements of one transaction never did. Nothing is left open on the connection.
 */
async function poolRead<T>(pool: pg.Pool, fn: (tx: Transaction) => Promise<T>, setup: { text: string; params: unknown[] } | undefined): Promise<T> {
  const { client, release } = await checkOut(pool);
  const scope = setup && prelude(setup.text, setup.params);
  const preparedPreludes = scope ? [scope] : [];
  const customPreludes = scope ? [scope, CUSTOM_PLANS] : [CUSTOM_PLANS];
  const committed: (() => void)[] = [];
  const tx: Transaction = {
    async query(text, params, options) {
      const custom = options?.prepare === false;
      const preludes = custom ? customPreludes : preparedPreludes;
      const config: pg.QueryConfig = { text, values: params ?? [], name: custom ? undefined : statementName(client, text), rowMode: options?.rowMode } as pg.QueryConfig;
      const socket = socketOf(client);
      socket?.cork();
      let answer: Promise<pg.QueryResult>;
      try {
        // A prelude new to the connection is prepared by running it once on its own, ahead (pipelined;
        // a read's preludes only set transaction-local settings). Should its Parse fail, so does the
        // read behind it, and pg forgets the name, so the next read sends it again.
        for (const p of preludes) if (!connectionHas(client, p)) client.query({ name: p.name, text: p.text, values: p.values }).catch(() => {});
        answer = sendWithPreludes(client, config, preludes).answer;
      } finally {
        socket?.uncork();
      }
      const { rows, rowCount } = await answer;
      return { rows, rowCount: rowCount ?? 0 };
    },
    queryLater() {
      throw new Error('a read-only transaction cannot queue a statement');
    },
    afterCommit: (cb) => committed.push(cb),
  };
  try {
    const result = await fn(tx);
    release();
    runAfterCommit(committed);
    return result;
  } catch (err) {
    release();
    throw classify(err);
  }
}

/**
 * One transaction on a connection of `pool`: commits when fn resolves, rolls back when it throws.
 * The connection pipelines (pg's `pipeline` mode): BEGIN and the setup are not sent on their own but
 * in one write with the transaction's first statement, and their answers are read with its answer,
 * so a one-statement transaction is two round trips (that write, then COMMIT), not three.
 * Statements queued by queryLater go in the same write as the next statement or the COMMIT. A
 * transaction that never queries sends nothing. Read-only ones are poolRead's.
 */
export async function poolTransaction<T>(pool: pg.Pool, fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
  if (options?.readOnly) return poolRead(pool, fn, options.setup);
  const { client, release } = await checkOut(pool);
  const socket = socketOf(client);
  // Sends without waiting; the caller awaits each answer in order. The handler only keeps an answer
  // that is never awaited (after an earlier failure) from counting as unhandled.
  const send = <R extends pg.QueryResultRow>(config: string | pg.QueryConfig): Promise<pg.QueryResult<R>> => {
    const sent = client.query<R>(config as pg.QueryConfig);
    sent.catch(() => {});
    return sent;
  };
  const prepared = (text: string, values: unknown[], rowMode?: 'array'): pg.QueryConfig => ({ name: statementName(client, text), text, values, rowMode }) as pg.QueryConfig;
  const setup = options?.setup && prelude(options.setup.text, options.setup.params);
  const committed: (() => void)[] = [];
  // Statements queued by queryLater, sent ahead of the next statement or the COMMIT (unnamed past
  // the connection's bound of prepared statements).
  let later: Prelude[] = [];
  let begun = false;
  let customPlans = false;
  /**
   * One write: what goes ahead of `last` (BEGIN and the setup when the transaction has not begun,
   * the queued statements), then `last`. Once the connection has prepared all of what goes ahead,
   * it goes as `last`'s preludes under one Sync (one answer to read, not one per statement);
   * until then (a connection's first transactions), each is sent on its own, pipelined in the same
   * corked write, which prepares it. The caller awaits `ahead` in order before `last`: the first to
   * fail is the error (a failed statement aborts what follows it). `folded` is set when `last` went
   * with preludes, to tell whether it ran.
   */
  const write = (last: pg.QueryConfig, customPlansFirst = false) => {
    const ahead: Promise<unknown>[] = [];
    const preludes = begun ? later : setup ? [BEGIN, setup, ...later] : [BEGIN, ...later];
    begun = true;
    later = [];
    const switchPlans = customPlansFirst && !customPlans;
    if (preludes.length > 0 && !switchPlans && preludes.every((p) => p.name && connectionHas(client, p))) {
      const { answer, query } = sendWithPreludes(client, last, preludes);
      answer.catch(() => {});
      return { ahead, last: answer, folded: query };
    }
    socket?.cork();
    try {
      for (const p of preludes) ahead.push(send(p.name ? { name: p.name, text: p.text, values: p.values } as pg.QueryConfig : { text: p.text, values: p.values }));
      if (switchPlans) {
        customPlans = true;
        ahead.push(send('set local plan_cache_mode = force_custom_plan'));
      }
      return { ahead, last: send(last) as Promise<pg.QueryResult>, folded: null };
    } finally {
      socket?.uncork();
    }
  };
  const tx: Transaction = {
    async query(text, params, options) {
      const custom = options?.prepare === false;
      const { ahead, last } = write(
        custom
          ? ({ text, values: params as unknown[], rowMode: options.rowMode } as pg.QueryConfig)
          : prepared(text, (params ?? []) as unknown[], options?.rowMode),
        custom,
      );
      for (const step of ahead) await step;
      const { rows, rowCount } = await last;
      return { rows, rowCount: rowCount ?? 0 };
    },
    queryLater(text, params) {
      later.push({ name: statementName(client, text) ?? '', text, values: params ?? [] });
    },
    afterCommit: (cb) => committed.push(cb),
  };
  // Once the COMMIT has run the transaction ends with it, whatever fails: PostgreSQL answers the
  // COMMIT of a failed transaction with ROLLBACK, and a COMMIT that fails rolls back itself. A COMMIT
  // sent behind queued statements does not run when one of them fails: then it is rolled back here.
  let commitSent: { last: Promise<unknown>; folded: StatementWithPreludes | null } | null = null;
  try {
    const result = await fn(tx);
    // Queued statements go in the COMMIT's write.
    if (later.length > 0 || begun) {
      const { ahead, last, folded } = write(COMMIT);
      commitSent = { last, folded };
      for (const step of ahead) await step;
      await last;
    }
    release();
    runAfterCommit(committed);
    return result;
  } catch (err) {
    try {
      if (commitSent) await commitSent.last.catch(() => {}); // answered
      if (begun && !(commitSent && (!commitSent.folded || commitSent.folded.reachedStatement))) await client.query('ROLLBACK');
      release();
    } catch {
      release(true);
    }
    throw classify(err);
  }
}
