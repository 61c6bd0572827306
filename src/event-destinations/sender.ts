// The outbound sender (API.md §9): sealed entries, per destination and chain in seq order, at
// least once. A destination is worked by whoever holds its lease (one instance at a time; a
// crashed holder's lease runs out within LEASE_MS). A failed entry holds back its chain's later
// entries and is retried with exponential backoff (2 s, 4 s, … capped at one hour); after 24 h of
// failure the destination is marked failing. Nothing here runs on a request's path.
import { randomUUID } from 'node:crypto';
import { AsyncResource } from 'node:async_hooks';
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import type { AuditFeed, FeedEntry } from '../audit/feed.js';
import type { RecordAudit } from '../audit/recorder.js';
import type { SecretBox } from '../secret-box.js';
import * as repo from './sender.repo.js';
import type { DestinationRow } from './event-destinations.repo.js';
import type { OutboundPolicy } from './outbound-address.js';
import { sendWebhook, type DeliveryResult } from './webhook-transport.js';
import { sendSyslog, syslogFrame } from './syslog-transport.js';

export const LEASE_MS = 15_000;
const BATCH = 100;
const PARALLEL = 8;
const MAX_BACKOFF_MS = 3600_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/** Delay before retry `attempts` (1 after the first failure): 2 s, 4 s, 8 s, … at most an hour. */
export function backoffMs(attempts: number): number {
  return Math.min(2000 * 2 ** Math.max(attempts - 1, 0), MAX_BACKOFF_MS);
}

/** API.md §9 filters: actions exact or `prefix*`, results a subset; empty lists match all. */
export function matchesFilter(entry: { action: string; result: string }, actions: readonly string[], results: readonly string[]): boolean {
  if (results.length > 0 && !results.includes(entry.result)) return false;
  if (actions.length === 0) return true;
  return actions.some((a) => (a.endsWith('*') ? entry.action.startsWith(a.slice(0, -1)) : entry.action === a));
}

export interface SenderStats {
  sent: number;
  failed: number;
  /** Per destination: sealed entries not yet delivered, over its chains. */
  lagEntries: Map<string, number>;
  /** Per destination: seconds since the oldest entry still held back by a failure was recorded (0: none held back). */
  lagSeconds(destinationId: string): number;
}

export function createEventSender(deps: {
  db: Database;
  feed: AuditFeed;
  secrets: SecretBox;
  policy: OutboundPolicy;
  recordAudit: RecordAudit;
  now: () => number;
  log: (err: unknown, message: string) => void;
  pollMs?: number;
}) {
  const owner = randomUUID();
  // "destination chain" -> when the entry a failure holds back was recorded (ms), for lagSeconds.
  const heldBack = new Map<string, number>();
  const stats: SenderStats = {
    sent: 0,
    failed: 0,
    lagEntries: new Map(),
    lagSeconds(destinationId) {
      let oldest = Infinity;
      for (const [key, at] of heldBack) if (key.startsWith(`${destinationId} `) && at < oldest) oldest = at;
      return oldest === Infinity ? 0 : Math.max(0, (deps.now() - oldest) / 1000);
    },
  };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = true;
  let lastPrune = 0;
  // Passes run in the sender's own async context, never in that of the request that woke it.
  const context = new AsyncResource('event-sender');

  const body = (type: string, timestamp: string, data: unknown) => JSON.stringify({ type, timestamp, data });

  // One keep-alive connection per webhook destination and URL, never shared with another
  // destination; the address guard runs again whenever it opens a new one. Dropped with the lease.
  const agents = new Map<string, { url: string; agent: http.Agent | https.Agent }>();
  function agentFor(d: repo.LeasedDestination): http.Agent {
    const held = agents.get(d.id);
    if (held && held.url === d.url) return held.agent;
    held?.agent.destroy();
    const options = { keepAlive: true, maxSockets: 1, keepAliveMsecs: 10_000 };
    const agent = d.url.startsWith('https:') ? new https.Agent(options) : new http.Agent(options);
    agents.set(d.id, { url: d.url, agent });
    return agent;
  }
  function dropAgents(keep: (id: string) => boolean): void {
    for (const [id, held] of agents) {
      if (keep(id)) continue;
      held.agent.destroy();
      agents.delete(id);
    }
  }

  function signingSecrets(d: repo.LeasedDestination): string[] {
    const secrets = d.secret_sealed ? [deps.secrets.open(d.secret_sealed)] : [];
    if (d.previous_secret_sealed && d.previous_secret_until && d.previous_secret_until.getTime() > deps.now()) {
      secrets.push(deps.secrets.open(d.previous_secret_sealed));
    }
    return secrets;
  }

  /** Sends entries in order; returns how many were delivered before the first failure, and that failure. */
  async function deliver(d: repo.LeasedDestination, entries: FeedEntry[]): Promise<{ delivered: number; results: DeliveryResult[] }> {
    if (d.kind === 'syslog') {
      const frames = entries.map((e) => syslogFrame({ timestamp: e.timestamp, msgId: e.action, msg: body(e.action, e.timestamp, e), result: e.result }));
      const result = await sendSyslog({ url: d.url, caCertificate: d.ca_certificate, frames, policy: deps.policy });
      // One connection for the batch: all delivered, or the first entry failed (the rest wait).
      return { delivered: result.delivered ? entries.length : 0, results: result.delivered ? entries.map(() => result) : [result] };
    }
    const secrets = signingSecrets(d);
    const results: DeliveryResult[] = [];
    const agent = agentFor(d);
    // The lease is renewed every few seconds while sending (an attempt takes at most 10 s of a 15 s
    // lease), not per entry: a catch-up sends thousands a second.
    let renewedAt = -Infinity; // renewed before the batch's first entry, whenever the pass took the lease
    for (const e of entries) {
      if (performance.now() - renewedAt > LEASE_MS / 5) {
        if (!(await repo.renewLease(deps.db, d.id, owner, LEASE_MS))) break; // lost the lease: stop at once
        renewedAt = performance.now();
      }
      const result = await sendWebhook({ url: d.url, secrets, messageId: e.id, body: body(e.action, e.timestamp, e), policy: deps.policy, agent });
      results.push(result);
      if (!result.delivered) break;
    }
    return { delivered: results.filter((r) => r.delivered).length, results };
  }

  async function workChain(d: repo.LeasedDestination, cursor: repo.CursorRow): Promise<void> {
    let lastSeq = Number(cursor.last_seq);
    for (;;) {
      const entries = await deps.feed.sealedAfter(cursor.chain_id, lastSeq, BATCH);
      if (entries.length === 0) return;
      const wanted = entries.filter((e) => matchesFilter(e, d.filter_actions, d.filter_results));
      const { delivered, results } = wanted.length > 0 ? await deliver(d, wanted) : { delivered: 0, results: [] };
      // Stopped short without a failed attempt: the lease was lost, and the new holder sends the rest.
      if (delivered < wanted.length && results.length === delivered) return;
      const failedAt = delivered < wanted.length ? wanted[delivered]! : null;
      // Everything before the failed entry is done (filtered-out entries included).
      const upTo = failedAt ? failedAt.seq - 1 : entries[entries.length - 1]!.seq;
      // The chain's first entry may be a retry; the rest are first attempts.
      const attemptOf = (i: number) => (i === 0 ? cursor.attempts + 1 : 1);
      const attempts = failedAt ? attemptOf(delivered) : 0;
      const now = deps.now();
      const outcome = await repo.recordProgress(deps.db, {
        destinationId: d.id,
        owner,
        chainId: cursor.chain_id,
        generation: cursor.generation,
        now: new Date(now),
        lastSeq: upTo,
        failure: failedAt ? { attempts, nextAttemptAt: new Date(now + backoffMs(attempts)), error: results[delivered]!.error ?? 'not delivered' } : null,
        attempts: results.map((result, i) => {
          const entry = wanted[i]!;
          return {
            entryId: entry.id, orgId: entry.orgId, seq: entry.seq, action: entry.action, attempt: attemptOf(i),
            outcome: result.delivered ? 'delivered' as const : 'failed' as const, responseStatus: result.responseStatus, error: result.error,
            durationMs: Math.round(result.durationMs),
          };
        }),
      });
      // The lease moved on (another instance owns this destination now), or a replay rewound the cursor.
      if (!outcome || !outcome.moved) return;
      stats.sent += delivered;
      const chainKey = `${d.id} ${cursor.chain_id}`;
      if (failedAt) {
        stats.failed += 1;
        heldBack.set(chainKey, Date.parse(failedAt.timestamp));
        if (outcome.failingSince && now - outcome.failingSince.getTime() >= repo.FAILING_AFTER_MS) await markFailing(d, results[delivered]!.error);
        return;
      }
      heldBack.delete(chainKey);
      lastSeq = upTo;
      cursor = { ...cursor, attempts: 0 };
    }
  }

  async function markFailing(d: repo.LeasedDestination, error: string | null): Promise<void> {
    await withTenant(deps.db, SYSTEM_SCOPE, async (tx) => {
      if (!(await repo.setFailing(tx, d.id))) return; // already failing
      await deps.recordAudit(tx, {
        orgId: d.org_id,
        actor: { type: 'system', id: null },
        action: 'event_destination.failing',
        resource: { type: 'event_destination', id: d.id, name: d.name },
        details: { kind: d.kind, lastError: error, failingForHours: 24 },
        result: 'failure',
        errorMessage: error,
      });
    });
  }

  async function workDestination(d: repo.LeasedDestination): Promise<void> {
    const { due, lag } = await repo.dueCursors(deps.db, d, new Date(deps.now()));
    stats.lagEntries.set(d.id, lag);
    for (const cursor of due) await workChain(d, cursor);
  }

  async function pass(): Promise<void> {
    const leased = await repo.leaseDestinations(deps.db, owner, LEASE_MS);
    // Destinations no longer held here (disabled, deleted, or sent by another instance) are not counted.
    for (const id of stats.lagEntries.keys()) if (!leased.some((d) => d.id === id)) stats.lagEntries.delete(id);
    for (const key of heldBack.keys()) if (!leased.some((d) => key.startsWith(`${d.id} `))) heldBack.delete(key);
    dropAgents((id) => leased.some((d) => d.id === id));
    for (let i = 0; i < leased.length; i += PARALLEL) {
      await Promise.all(leased.slice(i, i + PARALLEL).map((d) => workDestination(d).catch((err: unknown) => deps.log(err, `event destination ${d.id}: delivery pass failed`))));
    }
    if (deps.now() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = deps.now();
      await repo.pruneDeliveries(deps.db, new Date(deps.now() - 7 * 24 * 3600_000));
    }
  }

  /** One pass at a time per instance (two would each send a chain and race to move its cursor); a wake during a pass asks for another after it. */
  function run(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await pass();
        } while (again && !stopped);
      } catch (err) {
        deps.log(err, 'event delivery pass failed');
      } finally {
        running = null;
      }
    })();
    return running;
  }

  return {
    stats,
    start() {
      stopped = false;
      timer = setInterval(() => void run(), deps.pollMs ?? 1000);
      timer.unref();
      void run();
    },
    /** After a seal commits, or a destination changes: look now rather than at the next tick. */
    wake() {
      if (!stopped) void context.runInAsyncScope(run);
    },
    /** A whole pass that starts after this call, awaited (tests): the running one, then one more. */
    async runNow(): Promise<void> {
      if (running) {
        again = true;
        await running;
        return;
      }
      await context.runInAsyncScope(run);
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      while (running) await running;
      dropAgents(() => false);
      await repo.releaseLeases(deps.db, owner).catch(() => {});
    },
    /** POST /event-destinations/:id/test: one unchained event, now. */
    async sendTest(row: DestinationRow): Promise<DeliveryResult> {
      const timestamp = new Date(deps.now()).toISOString();
      const text = body('destination.test', timestamp, { destinationId: row.id, message: 'Test event from the device management service' });
      if (row.kind === 'syslog') {
        return sendSyslog({ url: row.url, caCertificate: row.ca_certificate, frames: [syslogFrame({ timestamp, msgId: 'destination.test', msg: text, result: 'success' })], policy: deps.policy });
      }
      const secrets = await withTenant(deps.db, SYSTEM_SCOPE, (tx) => repo.leasedSecrets(tx, row.id));
      if (!secrets) return { delivered: false, responseStatus: null, error: 'destination not found', durationMs: 0 };
      return sendWebhook({ url: row.url, secrets: signingSecrets(secrets), messageId: `test_${randomUUID()}`, body: text, policy: deps.policy });
    },
  };
}

export type EventSender = ReturnType<typeof createEventSender>;
