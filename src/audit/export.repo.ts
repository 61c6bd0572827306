// SQL for the audit export (API.md §8): one bounded keyset page at a time, so an export of 10,000
// rows never holds more than a page in memory nor a connection while the client reads.
// The filters repeat audit.repo.ts's where clause (not exported there), with the same semantics.
import type { Queryable } from '../db/database.js';
import { containsPattern, PLATFORM_CHAIN_ID, type AuditRowWithUser } from './audit.repo.js';

const COLUMNS = `a.id, a.org_id, a.seq, a.timestamp, a.actor_type, a.actor_id, a.actor_email, a.action, a.resource_type,
  a.resource_id, a.resource_name, a.details, a.ip_address, a.user_agent, a.result, a.error_message, a.prev_checksum, a.checksum,
  u.name as user_name, u.role as user_role`;

export interface ExportFilter {
  /** null: every chain the transaction's scope reaches. */
  orgIds: readonly string[] | null;
  platformOnly: boolean;
  user?: string;
  action?: string;
  resource?: string;
  from?: Date;
  to?: Date;
}

/** Where the previous page stopped: newest-first pages go on below (timestamp, id); chain pages after seq. */
export type ExportCursor =
  | { mode: 'newest'; before: { timestamp: Date; id: string } | null }
  | { mode: 'chain'; chainId: string; afterSeq: number };

export function chainIdOf(orgId: string | 'platform'): string {
  return orgId === 'platform' ? PLATFORM_CHAIN_ID : orgId;
}

function whereClause(filter: ExportFilter, cursor: ExportCursor, params: unknown[]): string {
  const where: string[] = [];
  const add = (value: unknown) => `$${params.push(value)}`;
  if (filter.platformOnly) where.push('a.org_id is null');
  else if (filter.orgIds !== null) where.push(`a.org_id = any(${add(filter.orgIds)}::uuid[])`);
  if (filter.user) {
    const p = add(containsPattern(filter.user));
    where.push(`(lower(a.actor_email) like ${p} escape '\\' or (a.actor_type = 'user' and a.actor_id in (
      select u2.id from users u2 where lower(u2.name) like ${p} escape '\\')))`);
  }
  if (filter.action) where.push(`lower(a.action) like ${add(containsPattern(filter.action))} escape '\\'`);
  if (filter.resource) {
    where.push(`lower(coalesce(a.resource_type, '') || E'\\n' || coalesce(a.resource_name, '')) like ${add(containsPattern(filter.resource))} escape '\\'`);
  }
  if (filter.from) where.push(`a.timestamp >= ${add(filter.from)}`);
  if (filter.to) where.push(`a.timestamp <= ${add(filter.to)}`);
  if (cursor.mode === 'chain') {
    // Sealed rows only (seq > n excludes the pending ones), through UNIQUE (chain_id, seq).
    where.push(`a.chain_id = ${add(cursor.chainId)}::uuid and a.seq > ${add(cursor.afterSeq)}`);
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
  const order = cursor.mode === 'chain' ? 'a.seq' : 'a.timestamp desc, a.id desc';
  const { rows } = await tx.query<AuditRowWithUser>(
    `select ${COLUMNS}
       from audit_logs a left join users u on a.actor_type = 'user' and u.id = a.actor_id
       ${where}
      order by ${order}
      limit $${params.push(limit)}`,
    params,
  );
  return rows;
}
