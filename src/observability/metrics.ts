// The service's metrics (issue 22): one prom-client registry per app instance (tests run several
// apps in one process, so never the global one), the hooks the modules report through, and the
// gauges read from the modules at scrape time. The modules never import prom-client: modules.ts
// hands them plain callbacks (`hooks`), and app.ts points the gauges at what they expose
// (`watch`). Labels are bounded sets: route templates, outcomes, reasons; the only tenant
// identifiers are the organization ids of the ten audit chains waiting longest (a fixed ten,
// which is what an operator needs to look at).
import { readdir, stat } from 'node:fs/promises';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerComputed, type Sample } from './computed.js';
import { createRequestMetrics, type RequestMetrics } from './request-metrics.js';

/** What the metrics read from the database layer at scrape time (db/database.ts's DatabaseUsage). */
export type DatabaseUsageView =
  | { kind: 'postgres'; max: number; open: number; idle: number; waiting: number }
  | { kind: 'pglite'; queued: number };

/** The audit queue (audit/backlog.repo.ts's PendingBacklog). */
export interface AuditBacklogView {
  pending: number;
  chains: number;
  worst: { orgId: string | null; pending: number; oldest: Date }[];
}

/** The outbound sender's running counts (event-destinations/sender.ts's SenderStats). */
export interface DeliveryStatsView {
  sent: number;
  failed: number;
  lagEntries: ReadonlyMap<string, number>;
  lagSeconds(destinationId: string): number;
}

export interface MetricsSources {
  database(): DatabaseUsageView;
  agentSockets(): number;
  /** The `top` audit chains waiting longest; read at most once per AUDIT_BACKLOG_REFRESH_MS. */
  auditBacklog(top: number): Promise<AuditBacklogView>;
  deliveries: DeliveryStatsView;
}

/** What the modules report, as plain callbacks (label values are the modules' own bounded unions). */
export interface MetricsHooks {
  transaction(login: string, seconds: number, committed: boolean): void;
  signInFailed(reason: string): void;
  signInThrottled(by: string): void;
  apiKeyRateLimited(): void;
  liveQuery(outcome: string, seconds: number): void;
  relayCall(direction: string, outcome: string): void;
  checkpointsSigned(kind: string, count: number): void;
  retentionRun(outcome: string, rowsRemoved: number): void;
}

export interface Metrics {
  readonly contentType: string;
  readonly hooks: MetricsHooks;
  /** Called once per answered request (http/server.ts's access log). */
  readonly requests: RequestMetrics;
  /** Points the scrape-time gauges at the running modules. */
  watch(sources: MetricsSources): void;
  /** The exposition text, for GET /metrics. */
  render(): Promise<string>;
}

/** Chains named in the seal-lag series: a bounded set, however many organizations there are. */
export const TOP_CHAINS = 10;
/** The audit queue is read at most this often per instance, in the background of the scrapes. */
export const AUDIT_BACKLOG_REFRESH_MS = 5_000;
/** A queue read gives up after this long (a saturated pool); the gauges are left out until the next. */
const AUDIT_BACKLOG_TIMEOUT_MS = 2_000;

const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// Label values known in advance are shown at 0 from the start, so a rate() or an alert has a series.
const SIGN_IN_FAILURES = ['invalid_credentials', 'user_disabled', 'mfa_invalid', 'mfa_replayed', 'recovery_code_invalid', 'mfa_token_invalid'];
const LIVE_OUTCOMES = ['ok', 'device_offline', 'agent_error', 'agent_bad_reply', 'agent_timeout', 'not_found', 'other'];

/**
 * The standard set, less what costs a scrape in proportion to the open sockets, synchronously (every
 * request waits behind it): with 10,000 agent sockets, listing every handle and resource took 5-10
 * ms per metric here (dms_agent_sockets counts the sockets), and prom-client's process_open_fds
 * lists /proc/self/fd, 12-70 ms. That one is kept, counted as the directory's size (Linux 6.2+)
 * or listed asynchronously on older kernels.
 */
const PER_HANDLE_METRICS = ['nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_resources', 'nodejs_active_resources_total'];

function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of PER_HANDLE_METRICS) registry.removeSingleMetric(name);
  if (!registry.getSingleMetric('process_open_fds')) return; // not Linux
  registry.removeSingleMetric('process_open_fds');
  new Gauge({ name: 'process_open_fds', help: 'Number of open file descriptors.', registers: [registry], async collect() {
    try {
      const { size } = await stat('/proc/self/fd');
      this.set(size > 0 ? size : (await readdir('/proc/self/fd')).length - 1);
    } catch {
      // left at its last value, as prom-client does
    }
  } });
}

/**
 * The last result of `read` (which must not reject), read again in the background once it is
 * `ttlMs` old: a scrape never waits for the database but the first, and a scrape flood (or several
 * Prometheus servers) costs one read per interval. Concurrent callers share one read.
 */
function refreshedEvery<T>(ttlMs: number, read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: T } | null = null;
  let pending: Promise<T> | null = null;
  const refresh = () => (pending ??= read().then((value) => {
    last = { at: performance.now(), value };
    return value;
  }).finally(() => {
    pending = null;
  }));
  return () => {
    if (last === null) return refresh();
    if (performance.now() - last.at >= ttlMs) void refresh();
    return Promise.resolve(last.value);
  };
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function createMetrics(options: { now: () => number; log: (message: string, err: unknown) => void }): Metrics {
  const { now } = options;
  const registry = new Registry();
  const registers = [registry];
  collectProcessMetrics(registry);
  let sources: MetricsSources | null = null;
  let auditBacklog: (() => Promise<AuditBacklogView | null>) | null = null;

  // --- database ----------------------------------------------------------------------------------
  const transactions = new Counter({ name: 'dms_db_transactions_total', help: 'Database transactions, by login (app, dms_audit_sealer, dms_audit_retention) and outcome', labelNames: ['login', 'outcome'], registers });
  const transactionSeconds = new Histogram({ name: 'dms_db_transaction_duration_seconds', help: 'Database transaction time, connection wait included, by login', labelNames: ['login'], buckets: SECONDS_BUCKETS, registers });
  // The pool's series only on PostgreSQL: PGlite has one connection and no pool.
  const pool = (sample: (u: Extract<DatabaseUsageView, { kind: 'postgres' }>) => Sample[]) => () => {
    const u = sources?.database();
    return u?.kind === 'postgres' ? sample(u) : [];
  };
  registerComputed(registry, {
    name: 'dms_db_pool_max_connections', help: 'Request connections this instance may open (DATABASE_POOL_SIZE; PostgreSQL only)', type: 'gauge',
    samples: pool((u) => [{ labels: {}, value: u.max }]),
  });
  registerComputed(registry, {
    name: 'dms_db_pool_connections', help: 'Open request connections by state (PostgreSQL only): in_use + idle is the pool size', type: 'gauge',
    samples: pool((u) => [{ labels: { state: 'in_use' }, value: u.open - u.idle }, { labels: { state: 'idle' }, value: u.idle }]),
  });
  new Gauge({ name: 'dms_db_waiting_transactions', help: 'Transactions waiting for a connection: a full pool (PostgreSQL), or the one connection (PGlite queue depth)', registers, collect() {
    const u = sources?.database();
    this.set(u === undefined ? 0 : u.kind === 'postgres' ? u.waiting : u.queued);
  } });

  // --- audit -------------------------------------------------------------------------------------
  // Left out of the scrape, not 0, when the queue could not be read: 0 would say nothing waits.
  // One read of the queue per scrape, shared by the five metrics made of it (a scrape collects them
  // all at once), and one clock reading, so the overall lag is exactly the worst chain's.
  let reading: Promise<{ view: AuditBacklogView | null; at: number }> | null = null;
  const readBacklog = () => (reading ??= (async () => ({ view: auditBacklog ? await auditBacklog() : null, at: now() }))()
    .finally(() => { reading = null; }));
  const backlog = (sample: (b: AuditBacklogView, lagOf: (oldest: Date) => number) => Sample[]) => async () => {
    const { view, at } = await readBacklog();
    return view ? sample(view, (oldest) => Math.max(0, (at - oldest.getTime()) / 1000)) : [];
  };
  const chain = (orgId: string | null) => ({ chain: orgId ?? 'platform' });
  registerComputed(registry, {
    name: 'dms_audit_pending_rows', help: 'Audit entries waiting to be sealed, over every chain', type: 'gauge',
    samples: backlog((b) => [{ labels: {}, value: b.pending }]),
  });
  registerComputed(registry, {
    name: 'dms_audit_pending_chains', help: 'Audit chains with entries waiting to be sealed', type: 'gauge',
    samples: backlog((b) => [{ labels: {}, value: b.chains }]),
  });
  registerComputed(registry, {
    name: 'dms_audit_seal_lag_seconds', help: 'Age of the oldest entry waiting to be sealed, over every chain (0: none waiting)', type: 'gauge',
    samples: backlog((b, lagOf) => [{ labels: {}, value: b.worst.length ? lagOf(b.worst[0]!.oldest) : 0 }]),
  });
  registerComputed(registry, {
    name: 'dms_audit_chain_seal_lag_seconds',
    help: `Age of the oldest entry waiting to be sealed, for the ${TOP_CHAINS} chains waiting longest (chain: organization id, or platform)`,
    type: 'gauge',
    samples: backlog((b, lagOf) => b.worst.map((c) => ({ labels: chain(c.orgId), value: lagOf(c.oldest) }))),
  });
  registerComputed(registry, {
    name: 'dms_audit_chain_pending_rows',
    help: `Entries waiting to be sealed, for the ${TOP_CHAINS} chains waiting longest (chain: organization id, or platform)`,
    type: 'gauge',
    samples: backlog((b) => b.worst.map((c) => ({ labels: chain(c.orgId), value: c.pending }))),
  });
  const checkpoints = new Counter({ name: 'dms_audit_checkpoints_signed_total', help: 'Signed audit checkpoints stored by this instance, by kind (periodic, anchor)', labelNames: ['kind'], registers });
  const retentionRuns = new Counter({ name: 'dms_audit_retention_runs_total', help: 'Audit retention passes, by outcome (completed; postponed: an archive failed; failed)', labelNames: ['outcome'], registers });
  const retentionRows = new Counter({ name: 'dms_audit_retention_rows_removed_total', help: 'Expired audit rows deleted by retention', registers });

  // --- sign-in and API keys ------------------------------------------------------------------------
  const signInFailures = new Counter({ name: 'dms_login_failures_total', help: 'Failed sign-in steps, by reason', labelNames: ['reason'], registers });
  const signInThrottles = new Counter({ name: 'dms_login_throttled_total', help: 'Sign-in attempts turned away by the attempt limits, by the limit (address, account)', labelNames: ['by'], registers });
  const rateLimited = new Counter({ name: 'dms_api_key_rate_limited_total', help: 'Requests refused by their API key\'s rate limit (429)', registers });

  // --- agents and live queries --------------------------------------------------------------------
  new Gauge({ name: 'dms_agent_sockets', help: 'Agent sockets connected to this instance', registers, collect() {
    this.set(sources?.agentSockets() ?? 0);
  } });
  const liveQueries = new Counter({ name: 'dms_live_queries_total', help: 'Live queries sent to agents, by outcome', labelNames: ['outcome'], registers });
  const liveSeconds = new Histogram({ name: 'dms_live_query_duration_seconds', help: 'Time for an agent to answer a live query (or for it to fail), by outcome', labelNames: ['outcome'], buckets: SECONDS_BUCKETS, registers });
  const relayCalls = new Counter({ name: 'dms_relay_calls_total', help: 'Live queries relayed across instances through Redis, by direction (forwarded, served) and outcome', labelNames: ['direction', 'outcome'], registers });

  // --- outbound deliveries --------------------------------------------------------------------------
  // The sender keeps running counts; the counter shows them as they are at scrape time.
  new Counter({ name: 'dms_event_deliveries_total', help: 'Outbound event deliveries by this instance, by outcome (delivered; failed: an attempt that holds its chain back)', labelNames: ['outcome'], registers, collect() {
    this.reset();
    this.inc({ outcome: 'delivered' }, sources?.deliveries.sent ?? 0);
    this.inc({ outcome: 'failed' }, sources?.deliveries.failed ?? 0);
  } });
  // Per destination would be a tenant's resource id per series: summed and maxed instead.
  new Gauge({ name: 'dms_event_delivery_backlog_entries', help: 'Sealed entries not yet delivered, summed over the destinations this instance sends', registers, collect() {
    let sum = 0;
    for (const n of sources?.deliveries.lagEntries.values() ?? []) sum += n;
    this.set(sum);
  } });
  new Gauge({ name: 'dms_event_delivery_lag_seconds', help: 'Age of the oldest entry held back by a failing delivery, the worst over the destinations this instance sends (0: none)', registers, collect() {
    let worst = 0;
    const d = sources?.deliveries;
    for (const id of d?.lagEntries.keys() ?? []) worst = Math.max(worst, d!.lagSeconds(id));
    this.set(worst);
  } });
  new Gauge({ name: 'dms_event_destinations_held_back', help: 'Destinations this instance sends whose delivery is held back by a failure', registers, collect() {
    let n = 0;
    const d = sources?.deliveries;
    for (const id of d?.lagEntries.keys() ?? []) if (d!.lagSeconds(id) > 0) n++;
    this.set(n);
  } });

  for (const reason of SIGN_IN_FAILURES) signInFailures.inc({ reason }, 0);
  for (const by of ['address', 'account']) signInThrottles.inc({ by }, 0);
  for (const outcome of LIVE_OUTCOMES) liveQueries.inc({ outcome }, 0);
  for (const kind of ['periodic', 'anchor']) checkpoints.inc({ kind }, 0);
  for (const outcome of ['completed', 'postponed', 'failed']) retentionRuns.inc({ outcome }, 0);

  return {
    contentType: registry.contentType,
    requests: createRequestMetrics(registry),
    hooks: {
      transaction(login, seconds, committed) {
        transactions.inc({ login, outcome: committed ? 'committed' : 'rolled_back' });
        transactionSeconds.observe({ login }, seconds);
      },
      signInFailed: (reason) => signInFailures.inc({ reason }),
      signInThrottled: (by) => signInThrottles.inc({ by }),
      apiKeyRateLimited: () => rateLimited.inc(),
      liveQuery(outcome, seconds) {
        liveQueries.inc({ outcome });
        liveSeconds.observe({ outcome }, seconds);
      },
      relayCall: (direction, outcome) => relayCalls.inc({ direction, outcome }),
      checkpointsSigned: (kind, count) => checkpoints.inc({ kind }, count),
      retentionRun(outcome, rowsRemoved) {
        retentionRuns.inc({ outcome });
        retentionRows.inc(rowsRemoved);
      },
    },
    watch(given) {
      sources = given;
      // A failed read (the database away, the pool saturated) leaves the audit gauges out, and is
      // kept like a result, so a database in trouble is asked once per interval.
      auditBacklog = refreshedEvery(AUDIT_BACKLOG_REFRESH_MS, () => within(AUDIT_BACKLOG_TIMEOUT_MS, given.auditBacklog(TOP_CHAINS)).catch((err: unknown) => {
        options.log('metrics could not read the audit queue; its gauges are left out', err);
        return null;
      }));
    },
    render: () => registry.metrics(),
  };
}
