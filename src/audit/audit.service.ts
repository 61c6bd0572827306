// Reading the audit log within the caller's reach (SPEC "Audit logs", API.md §8), and verifying a
// chain by streaming it in seq order.
import type { Database } from '../db/database.js';
import { withTenant } from '../db/tenant-scope.js';
import { AppError, notFound } from '../errors.js';
import type { Caller } from '../http/auth.js';
import { pageOf, paginated } from '../http/pagination.js';
import * as repo from './audit.repo.js';
import { legacyEntry, logEntry } from './entries.js';
import { checkLink, type BreakReason } from './hash-chain.js';
import type { AuditListQuery, VerifyResult } from './schemas.js';
import { toChainFields } from './sealer.js';

const VERIFY_BATCH = 5000;

type Chains = { orgIds: readonly string[] | null; platformOnly: boolean };

/** What the caller may read, narrowed by an orgId filter; null when that is nothing at all. */
function chainsFor(caller: Caller, orgId: string | undefined): Chains | null {
  if (orgId === 'platform') return caller.scope === 'system' ? { orgIds: null, platformOnly: true } : null;
  if (orgId) return caller.canAccessOrg(orgId) ? { orgIds: [orgId], platformOnly: false } : null;
  if (caller.scope === 'system') return { orgIds: null, platformOnly: false };
  return caller.accessibleOrgIds!.length ? { orgIds: caller.accessibleOrgIds, platformOnly: false } : null;
}

function parseRange(query: AuditListQuery): { from?: Date; to?: Date } {
  const from = query.from ? new Date(query.from) : undefined;
  const to = query.to ? new Date(query.to) : undefined;
  if (from && to && from > to) throw new AppError('VALIDATION_FAILED', 'from must not be later than to');
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

export function createAuditService(deps: { db: Database }) {
  const { db } = deps;

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
      let previous: { seq: number; checksum: string } | null = null;
      if (start > 1) {
        previous = anchor?.seq === start - 1 ? anchor : await withTenant(db, caller.tenant, (tx) => repo.sealedRowAt(tx, chainId, start - 1));
      }
      const toSeq = params.toSeq ?? null;
      let checked = 0;
      let firstSeq: number | null = null;
      let brokenAt: VerifyResult['brokenAt'] = null;
      // Streams the chain a batch at a time, each in its own short transaction, fetching the next
      // batch while this one is hashed: memory stays flat and the database and CPU work overlap.
      const fetchAfter = (after: number) => withTenant(db, caller.tenant, (tx) => repo.sealedRowsAfter(tx, chainId, after, toSeq, VERIFY_BATCH));
      let next: Promise<repo.ChainRow[]> | null = fetchAfter(start - 1);
      outer: while (next) {
        const rows: repo.ChainRow[] = await next;
        next = rows.length === VERIFY_BATCH ? fetchAfter(rows[rows.length - 1]!.seq!) : null;
        for (const row of rows) {
          const fields = { ...toChainFields(row), seq: row.seq!, prevChecksum: row.prev_checksum, checksum: row.checksum! };
          const reason: BreakReason | null = checkLink(previous, fields);
          if (reason) {
            brokenAt = { seq: row.seq!, id: row.id, reason };
            await next?.catch(() => {});
            break outer;
          }
          firstSeq ??= row.seq!;
          previous = { seq: row.seq!, checksum: row.checksum! };
          checked++;
        }
      }
      // Rows cut from the end leave no broken link behind them: compare with the chain's head.
      const expectedLast = toSeq === null ? state.lastSeq : Math.min(toSeq, state.lastSeq);
      const lastSeq = previous && checked > 0 ? previous.seq : null;
      if (!brokenAt && expectedLast > (lastSeq ?? anchor?.seq ?? start - 1) && expectedLast >= start) {
        brokenAt = { seq: (lastSeq ?? start - 1) + 1, id: null, reason: 'missing_rows' };
      }
      return { valid: brokenAt === null, checked, firstSeq, lastSeq, anchor, pending: state.pending, brokenAt };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
