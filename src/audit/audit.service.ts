// Reading the audit log within the caller's reach (SPEC "Audit logs", API.md §8), and verifying a
// chain by streaming it in seq order.
import type { Database } from '../db/database.js';
import { withTenant } from '../db/tenant-scope.js';
import { AppError, notFound, reversedRange } from '../errors.js';
import type { Caller } from '../http/auth.js';
import { pageOf, paginated } from '../http/pagination.js';
import * as repo from './audit.repo.js';
import { legacyEntry, logEntry } from './entries.js';
import { verifyRange, type Link, type RangeJob, type RangeResult } from './chain-verifier.js';
import type { AuditListQuery, VerifyResult } from './schemas.js';
import type { VerifyPool } from './verify-pool.js';

// Long chains on PostgreSQL are verified by the worker pool, split into one contiguous range per worker.
const PARALLEL_MIN_ROWS = 20_000;

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
  if (from && to && from > to) throw reversedRange('from', 'to');
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

/** `verifyPool`: worker threads for long chains (PostgreSQL); without one, chains are verified on this thread. */
export function createAuditService(deps: { db: Database; verifyPool: VerifyPool | null }) {
  const { db, verifyPool } = deps;

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
    const { rows, total } = await withTenant(db, caller.tenant, (tx) =>
      repo.listAuditRows(tx, filter, page.limit, page.offset, !params.skipCount),
    );
    return { rows, total, page };
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
      const row = await withTenant(db, caller.tenant, (tx) => repo.findAuditRow(tx, id));
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
        throw new AppError('VALIDATION_FAILED', 'orgId is required: name the organization (or "platform") whose chain to verify');
      }
      if (params.fromSeq && params.toSeq && params.fromSeq > params.toSeq) {
        throw new AppError('VALIDATION_FAILED', 'fromSeq must not be greater than toSeq');
      }

      const state = await withTenant(db, caller.tenant, (tx) => repo.chainState(tx, chainId));
      const anchor = state.anchorSeq !== null && state.anchorChecksum !== null ? { seq: state.anchorSeq, checksum: state.anchorChecksum } : null;
      const start = Math.max(params.fromSeq ?? 1, (anchor?.seq ?? 0) + 1);
      const previous = start === 1 ? null : anchor?.seq === start - 1 ? anchor : 'stored';
      const end = Math.min(params.toSeq ?? state.lastSeq, state.lastSeq);
      const jobs: RangeJob[] = [];
      if (verifyPool && end - start + 1 >= PARALLEL_MIN_ROWS) {
        // Contiguous ranges; each range's first row is checked against the stored row before it,
        // which the previous range verifies in turn.
        const size = Math.ceil((end - start + 1) / verifyPool.size);
        for (let from = start; from <= end; from += size) {
          jobs.push({ chainId, fromSeq: from, toSeq: Math.min(from + size - 1, end), previous: from === start ? previous : 'stored' });
        }
      } else {
        jobs.push({ chainId, fromSeq: start, toSeq: params.toSeq ?? null, previous });
      }
      const results = jobs.length > 1
        ? await Promise.all(jobs.map((job) => verifyPool!.verify(caller.tenant, job)))
        : [await verifyRange(db, caller.tenant, jobs[0]!)];

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
      return { valid: brokenAt === null, checked, firstSeq, lastSeq, anchor, pending: state.pending, brokenAt };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
