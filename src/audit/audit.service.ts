// Reading the audit log within the caller's reach (SPEC "Audit logs", API.md §8), and verifying a
// chain by streaming it in seq order, off the event loop, at most a few at a time, remembering the
// last answer for as long as the rows it read are unchanged.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database, Transaction } from '../db/database.js';
import { readTenant, withTenant, type TenantScope } from '../db/tenant-scope.js';
import { AppError, notFound, reversedRange } from '../errors.js';
import type { Caller } from '../http/auth.js';
import { pageOf, paginated } from '../http/pagination.js';
import * as repo from './audit.repo.js';
import { legacyEntry, logEntry } from './entries.js';
import { countVersions, verifyRange, type Link, type RangeJob, type RangeResult } from './chain-verifier.js';
import type { AuditListQuery, VerifyResult } from './schemas.js';
import { createVerifyCache } from './verify-cache.js';
import type { VerifyPool } from './verify-pool.js';

// Long chains on PostgreSQL are verified by the worker pool, split into one contiguous range per worker.
const PARALLEL_MIN_ROWS = 20_000;
// Verifications at once per instance: the pool's size, so runs never wait for each other's threads.
const VERIFY_RUNS = 2;
// Ranges this short are hashed on the event loop: a few milliseconds, like reading one batch.
const INLINE_MAX_ROWS = 500;
// PGlite runs every query on this thread, one at a time with every other request's: reads this
// short let other requests in between; a worker hashes each batch while the next is read.
const PGLITE_BATCH = 250;
// Row versions are counted over this many seqs per query: milliseconds on PGlite, where it blocks.
const VERSION_SPAN = { pglite: 5_000, postgres: 50_000 } as const;

/** What verification found; the answer adds the chain's anchor and pending count. */
type Verified = Omit<VerifyResult, 'anchor' | 'pending'>;

/**
 * PGlite settles every query as a microtask, so queries back to back never let the event loop turn:
 * verification's transactions run one at a time, each on a fresh turn, timers and sockets served
 * in between.
 */
function takingTurns(db: Database): Database {
  let previous: Promise<unknown> = Promise.resolve();
  // Every argument passed on: withTenant's scope travels with BEGIN.
  const transaction: Database['transaction'] = (...args) => {
    const mine = previous.then(() => nextTurn()).then(() => db.transaction(...args));
    previous = mine.catch(() => {});
    return mine;
  };
  return Object.create(db, { transaction: { value: transaction } }) as Database;
}

type Chains = { orgIds: readonly string[] | null; platformOnly: boolean };

/** The chains a caller may read, narrowed by `orgId` (or 'platform'); null when none. Shared by lists, reports and export. */
export function chainsFor(caller: Caller, orgId: string | undefined): Chains | null {
  if (orgId === 'platform') return caller.scope === 'system' ? { orgIds: null, platformOnly: true } : null;
  if (orgId) return caller.canAccessOrg(orgId) ? { orgIds: [orgId], platformOnly: false } : null;
  if (caller.scope === 'system') return { orgIds: null, platformOnly: false };
  return caller.accessibleOrgIds!.length ? { orgIds: caller.accessibleOrgIds, platformOnly: false } : null;
}

/** A query's from/to (schema-checked date-times) as Dates. Shared by lists and export. */
export function parseRange(query: { from?: string; to?: string }): { from?: Date; to?: Date } {
  const from = query.from ? new Date(query.from) : undefined;
  const to = query.to ? new Date(query.to) : undefined;
  if (from && to && from > to) throw reversedRange('from', 'to', [{ path: 'query.from', message: 'is later than to' }]);
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

/**
 * `verifyPool`: worker threads that read and hash ranges (PostgreSQL) or hash the batches read here
 * (PGlite); without one, chains are verified on this thread.
 */
export function createAuditService(deps: { db: Database; verifyPool: VerifyPool | null }) {
  const { db, verifyPool } = deps;
  const verifications = createVerifyCache<Verified>({ maxRuns: VERIFY_RUNS, maxRanges: 1000 });
  const verifyDb = db.kind === 'pglite' ? takingTurns(db) : db;

  async function query(caller: Caller, params: AuditListQuery & { q?: string }) {
    const page = pageOf(params);
    const range = parseRange(params);
    const chains = chainsFor(caller, params.orgId);
    if (!chains) return { rows: [], total: params.skipCount ? null : 0, page };
    const filter: repo.AuditQuery = { ...chains, ...range };
    if (params.user) filter.user = params.user;
    if (params.action) filter.action = params.action;
    if (params.resource) filter.resource = params.resource;
    if (params.q) filter.q = params.q;
    const { rows, total } = await readTenant(db, caller.tenant, (tx) =>
      repo.listAuditRows(tx, filter, page.limit, page.offset, !params.skipCount),
    );
    return { rows, total, page };
  }

  /**
   * The row versions of a chain with after < seq <= toSeq (null: unbounded), a span per query. On
   * PostgreSQL the worker threads count them, each a share of the spans on its own connections,
   * so the count runs on every core (a request holds at most one connection of the pool).
   */
  async function rowVersions(scope: TenantScope, chainId: string, after: number | null, toSeq: number | null, lastSeq: number): Promise<string> {
    const span = VERSION_SPAN[db.kind];
    // Concrete bounds keep each count an index range scan; the first and last spans are open-ended.
    const to = toSeq ?? Number.MAX_SAFE_INTEGER;
    const spans: [number, number][] = [];
    for (let from = after ?? Number.MIN_SAFE_INTEGER; ;) {
      const upTo = Math.max(from, 0) + span >= Math.min(to, lastSeq) ? to : Math.max(from, 0) + span;
      spans.push([from, upTo]);
      if (upTo === to) break;
      from = upTo;
    }
    const shares = verifyPool && db.connection && spans.length > 1 ? verifyPool.size : 1;
    const size = Math.ceil(spans.length / shares);
    const counted = await Promise.all(Array.from({ length: Math.ceil(spans.length / size) }, (_, i) => {
      const share = spans.slice(i * size, (i + 1) * size);
      return shares > 1 ? verifyPool!.versions(scope, chainId, share) : countVersions(verifyDb, scope, chainId, share);
    }));
    return `${counted.reduce((n, c) => n + c.rows, 0)}:${counted.reduce((sum, c) => sum + BigInt(c.xminSum), 0n)}`;
  }

  /** Verifies start..end (toSeq null: to the chain's end) from `previous`, off the event loop. */
  async function verifyChain(scope: TenantScope, chainId: string, start: number, end: number, previous: Link | null | 'stored', toSeq: number | null): Promise<Verified> {
    const rowCount = end - start + 1;
    const jobs: RangeJob[] = [];
    if (verifyPool && db.connection && rowCount >= PARALLEL_MIN_ROWS) {
      // Contiguous ranges; each range's first row is checked against the stored row before it,
      // which the previous range verifies in turn.
      const size = Math.ceil(rowCount / verifyPool.size);
      for (let from = start; from <= end; from += size) {
        jobs.push({ chainId, fromSeq: from, toSeq: Math.min(from + size - 1, end), previous: from === start ? previous : 'stored' });
      }
    } else {
      jobs.push({ chainId, fromSeq: start, toSeq, previous });
    }
    const here = db.kind === 'pglite' ? { batch: PGLITE_BATCH } : {};
    let results: RangeResult[];
    if (!verifyPool || rowCount <= INLINE_MAX_ROWS) {
      results = [await verifyRange(verifyDb, scope, jobs[0]!, here)];
    } else if (db.connection) {
      results = await Promise.all(jobs.map((job) => verifyPool.verify(scope, job)));
    } else {
      // PGlite: read here in small batches, each hashed in a worker while the next is read.
      results = [await verifyRange(verifyDb, scope, jobs[0]!, { ...here, check: (orgId, link, rows) => verifyPool.check(orgId, link, rows) })];
    }

    let checked = 0;
    let firstSeq: number | null = null;
    let last: Link | null = null;
    let brokenAt: VerifyResult['brokenAt'] = null;
    for (const result of results) {
      checked += result.checked;
      firstSeq ??= result.firstSeq;
      last = result.last ?? last;
      if (result.brokenAt) {
        brokenAt = result.brokenAt;
        break;
      }
    }
    const lastSeq = checked > 0 ? last!.seq : null;
    // Rows cut from the end leave no broken link behind them: compare with the chain's head.
    if (!brokenAt && end > (lastSeq ?? start - 1) && end >= start) {
      brokenAt = { seq: (lastSeq ?? start - 1) + 1, id: null, reason: 'missing_rows' };
    }
    return { valid: brokenAt === null, checked, firstSeq, lastSeq, brokenAt };
  }

  return {
    async entries(caller: Caller, params: AuditListQuery) {
      const { rows, total, page } = await query(caller, params);
      const { pagination } = paginated([], page, total);
      return { entries: rows.map(legacyEntry), pagination };
    },

    async logs(caller: Caller, params: AuditListQuery & { q?: string }) {
      const { rows, total, page } = await query(caller, params);
      return paginated(rows.map(logEntry), page, total);
    },

    async log(caller: Caller, id: string) {
      const row = await readTenant(db, caller.tenant, (tx) => repo.findAuditRow(tx, id));
      if (!row) throw notFound('Audit log entry');
      return logEntry(row);
    },

    async verify(caller: Caller, params: { orgId?: string; fromSeq?: number; toSeq?: number }): Promise<VerifyResult> {
      let chainId: string;
      if (params.orgId === 'platform') {
        if (caller.scope !== 'system') throw notFound('Chain');
        chainId = repo.PLATFORM_CHAIN_ID;
      } else if (params.orgId) {
        if (!caller.canAccessOrg(params.orgId)) throw notFound('Organization');
        chainId = params.orgId;
      } else if (caller.scope === 'organization' && caller.orgId) {
        chainId = caller.orgId;
      } else {
        throw new AppError('VALIDATION_FAILED', 'orgId is required: name the organization (or "platform") whose chain to verify', {
          errors: [{ path: 'query.orgId', message: 'is required' }],
        });
      }
      if (params.fromSeq && params.toSeq && params.fromSeq > params.toSeq) {
        throw new AppError('VALIDATION_FAILED', 'fromSeq must not be greater than toSeq', { errors: [{ path: 'query.fromSeq', message: 'is greater than toSeq' }] });
      }

      const { fromSeq, toSeq } = params;
      // Everyone who may verify a chain reads the same rows of it, so runs and results are shared.
      return verifications.answer(chainId, `${fromSeq ?? ''}:${toSeq ?? ''}`, async (remembered) => {
        const state = await withTenant(verifyDb, caller.tenant, (tx) => repo.chainState(tx, chainId));
        const anchor = state.anchorSeq !== null && state.anchorChecksum !== null ? { seq: state.anchorSeq, checksum: state.anchorChecksum } : null;
        const start = Math.max(fromSeq ?? 1, (anchor?.seq ?? 0) + 1);
        const previous = start === 1 ? null : anchor?.seq === start - 1 ? anchor : 'stored';
        const end = Math.min(toSeq ?? state.lastSeq, state.lastSeq);
        // The rows verification reads: from the stored row before the range, or, from the anchor or
        // seq 1, every row below it too (there should be none).
        const versions = await rowVersions(caller.tenant, chainId, previous === 'stored' ? start - 2 : null, toSeq ?? null, state.lastSeq);
        const verified = await remembered(`${state.lastSeq}:${anchor?.seq ?? ''}:${anchor?.checksum ?? ''}|${versions}`, () =>
          verifyChain(caller.tenant, chainId, start, end, previous, toSeq ?? null));
        return { ...verified, anchor, pending: state.pending };
      });
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
