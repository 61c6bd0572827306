// SQL for the audit export (API.md §8): one bounded keyset page at a time, so an export of 10,000
// rows never holds more than a page in memory nor a connection while the client reads.
// The filters are audit.repo.ts's, so /logs and export match the same rows.
import type { Queryable } from '../db/database.js';
import {
  COLUMNS, filterConditions, INDEX_ORDER_ONLY, pageWithSeals, PLATFORM_CHAIN_ID, SEALS_WITH_ENTRIES, VALUE_DEPENDENT_PLAN, type AuditQuery,
  type AuditRowWithUser,
} from './audit.repo.js';

/** The common audit filters (export has no free-text `q`). */
export type ExportFilter = Omit<AuditQuery, 'q'>;

/** Where the previous page stopped: newest-first pages go on below (timestamp, id); chain pages after seq. */
export type ExportCursor =
  | { mode: 'newest'; before: { timestamp: Date; id: string } | null }
  | { mode: 'chain'; chainId: string; afterSeq: number };

export function chainIdOf(orgId: string | 'platform'): string {
  return orgId === 'platform' ? PLATFORM_CHAIN_ID : orgId;
}

function whereClause(filter: ExportFilter, cursor: ExportCursor, params: unknown[]): string {
  const where = filterConditions(filter, params);
  const add = (value: unknown) => `$${params.push(value)}`;
  if (cursor.mode === 'chain') {
    // Sealed rows only (seq > n excludes the pending ones), through the seals' UNIQUE (chain_id, seq).
    where.push(`s.chain_id = ${add(cursor.chainId)}::uuid and s.seq > ${add(cursor.afterSeq)}`);
  } else if (cursor.before) {
    // Written so the planner gets a plain upper bound on timestamp for the (org_id, timestamp desc, id desc) index.
    const ts = add(cursor.before.timestamp);
    where.push(`a.timestamp <= ${ts} and (a.timestamp < ${ts} or a.id < ${add(cursor.before.id)}::uuid)`);
  }
  return where.length ? `where ${where.join(' and ')}` : '';
}

/** The next page of an export, in the /logs row shape (with the acting user's name and role). */
export async function exportPage(tx: Queryable, filter: ExportFilter, cursor: ExportCursor, limit: number): Promise<AuditRowWithUser[]> {
  const params: unknown[] = [];
  const where = whereClause(filter, cursor, params);
  if (cursor.mode === 'chain') {
    // The chain's seals in seq order, each with its entry, the filters applied to the entries.
    // Planned for the chain as it is now: chains grow fast, and a plan kept from a small one is not
    // the plan for a large one (the outbound sender reads through here too).
    await tx.query(INDEX_ORDER_ONLY);
    const { rows } = await tx.query<AuditRowWithUser>(
      `select ${COLUMNS}, u.name as user_name, u.role as user_role from ${SEALS_WITH_ENTRIES} ${where}
        order by s.seq limit $${params.push(limit)}`,
      params,
      VALUE_DEPENDENT_PLAN,
    );
    return rows;
  }
  const { rows } = await tx.query<AuditRowWithUser>(
    pageWithSeals(`select a.* from audit_entries a ${where} order by a.timestamp desc, a.id desc limit $${params.push(limit)}`),
    params,
    VALUE_DEPENDENT_PLAN,
  );
  return rows;
}
