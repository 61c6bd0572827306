// SQL for the audit log: appending, sealing, listing, searching and walking a chain.
import type { Queryable } from '../db/database.js';
import { NIL_UUID } from '../db/columns.js';
import { substringPattern } from '../db/like.js';

/** The chain of entries with no organization (partners, sign-ups, system actions). */
export const PLATFORM_CHAIN_ID = NIL_UUID;

export interface AuditRow {
  id: string;
  org_id: string | null;
  seq: number | null;
  timestamp: Date;
  actor_type: string;
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  resource_name: string | null;
  details: Record<string, unknown>;
  ip_address: string | null;
  user_agent: string | null;
  result: string;
  error_message: string | null;
  prev_checksum: string | null;
  checksum: string | null;
}

/** A row as the chain sees it: the timestamp already in its canonical text form. */
export interface ChainRow extends Omit<AuditRow, 'timestamp'> {
  ts: string;
}

/** A row with the acting user's name and role, for the list shapes. */
export interface AuditRowWithUser extends AuditRow {
  user_name: string | null;
  user_role: string | null;
}

// The canonical timestamp text (API.md §8: UTC, milliseconds), made by PostgreSQL while it sends the row.
const CHAIN_COLUMNS = `a.id, a.org_id, a.seq, to_char(a.timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ts,
  a.actor_type, a.actor_id, a.actor_email, a.action, a.resource_type, a.resource_id, a.resource_name, a.details, a.ip_address,
  a.user_agent, a.result, a.error_message, a.prev_checksum, a.checksum`;

const COLUMNS = `a.id, a.org_id, a.seq, a.timestamp, a.actor_type, a.actor_id, a.actor_email, a.action, a.resource_type,
  a.resource_id, a.resource_name, a.details, a.ip_address, a.user_agent, a.result, a.error_message, a.prev_checksum, a.checksum`;

export type NewAuditRow = Omit<AuditRow, 'seq' | 'prev_checksum' | 'checksum'>;

export async function insertAuditRow(tx: Queryable, row: NewAuditRow): Promise<void> {
  await tx.query(
    `insert into audit_logs (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id,
       resource_name, details, ip_address, user_agent, result, error_message)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      row.id, row.org_id, row.timestamp, row.actor_type, row.actor_id, row.actor_email, row.action, row.resource_type,
      row.resource_id, row.resource_name, JSON.stringify(row.details), row.ip_address, row.user_agent, row.result, row.error_message,
    ],
  );
}

// --- sealing -----------------------------------------------------------------------------------

export async function chainsWithPendingRows(tx: Queryable): Promise<{ chain_id: string; org_id: string | null }[]> {
  const { rows } = await tx.query<{ chain_id: string; org_id: string | null }>(
    `select distinct chain_id, org_id from audit_logs where seq is null`,
  );
  return rows;
}

/** Takes the chain's head for this transaction, or null when another sealer holds it. */
export async function lockChainHead(tx: Queryable, chainId: string, orgId: string | null): Promise<{ last_seq: number; last_checksum: string | null } | null> {
  await tx.query(`insert into audit_chains (chain_id, org_id) values ($1, $2) on conflict do nothing`, [chainId, orgId]);
  const { rows } = await tx.query<{ last_seq: number; last_checksum: string | null }>(
    `select last_seq, last_checksum from audit_chains where chain_id = $1 for update skip locked`,
    [chainId],
  );
  return rows[0] ?? null;
}

export async function pendingRows(tx: Queryable, chainId: string, limit: number): Promise<ChainRow[]> {
  const { rows } = await tx.query<ChainRow>(
    `select ${CHAIN_COLUMNS} from audit_logs a where a.chain_id = $1 and a.seq is null order by a.pending_order limit $2`,
    [chainId, limit],
  );
  return rows;
}

export async function applySeals(tx: Queryable, seals: { id: string; seq: number; prevChecksum: string | null; checksum: string }[]): Promise<void> {
  await tx.query(`select audit_apply_seals($1::uuid[], $2::bigint[], $3::text[], $4::text[])`, [
    seals.map((s) => s.id),
    seals.map((s) => s.seq),
    seals.map((s) => s.prevChecksum),
    seals.map((s) => s.checksum),
  ]);
}

export async function moveChainHead(tx: Queryable, chainId: string, seq: number, checksum: string): Promise<void> {
  await tx.query(`update audit_chains set last_seq = $2, last_checksum = $3 where chain_id = $1`, [chainId, seq, checksum]);
}

// --- reading -----------------------------------------------------------------------------------

export interface AuditQuery {
  /** null: every chain the transaction's scope reaches; [] never matches. */
  orgIds: readonly string[] | null;
  platformOnly: boolean;
  user?: string;
  action?: string;
  resource?: string;
  q?: string;
  from?: Date;
  to?: Date;
}

/** A literal, case-insensitive substring pattern, matched against lower-cased text. */
const containsPattern = (text: string) => substringPattern(text.toLowerCase());

/** The conditions of the common audit filters, their values appended to `params` (lists, search, export). */
export function filterConditions(query: AuditQuery, params: unknown[]): string[] {
  const where: string[] = [];
  const add = (value: unknown) => `$${params.push(value)}`;
  if (query.platformOnly) where.push('a.org_id is null');
  else if (query.orgIds !== null) where.push(`a.org_id = any(${add(query.orgIds)}::uuid[])`);
  if (query.user) {
    const p = add(containsPattern(query.user));
    // The name match is a set computed once (a hashed subplan), not a lookup per audit row.
    where.push(`(lower(a.actor_email) like ${p} escape '\\' or (a.actor_type = 'user' and a.actor_id in (
      select u2.id from users u2 where lower(u2.name) like ${p} escape '\\')))`);
  }
  if (query.action) where.push(`lower(a.action) like ${add(containsPattern(query.action))} escape '\\'`);
  if (query.resource) {
    where.push(`lower(coalesce(a.resource_type, '') || E'\\n' || coalesce(a.resource_name, '')) like ${add(containsPattern(query.resource))} escape '\\'`);
  }
  if (query.q) {
    where.push(`audit_search_text(a.action, a.actor_email, a.resource_type, a.resource_name, a.details) like ${add(containsPattern(query.q))} escape '\\'`);
  }
  if (query.from) where.push(`a.timestamp >= ${add(query.from)}`);
  if (query.to) where.push(`a.timestamp <= ${add(query.to)}`);
  return where;
}

function whereClause(query: AuditQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const where = filterConditions(query, params);
  return { sql: where.length ? `where ${where.join(' and ')}` : '', params };
}

export async function listAuditRows(
  tx: Queryable,
  query: AuditQuery,
  limit: number,
  offset: number,
  withTotal: boolean,
): Promise<{ rows: AuditRowWithUser[]; total: number | null }> {
  const { sql, params } = whereClause(query);
  const { rows } = await tx.query<AuditRowWithUser>(
    `select ${COLUMNS}, u.name as user_name, u.role as user_role
       from audit_logs a left join users u on a.actor_type = 'user' and u.id = a.actor_id
       ${sql}
      order by a.timestamp desc, a.id desc
      limit $${params.length + 1} offset $${params.length + 2}`,
    [...params, limit, offset],
  );
  if (!withTotal) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total from audit_logs a ${sql}`, params);
  return { rows, total: count.rows[0]!.total };
}

export async function findAuditRow(tx: Queryable, id: string): Promise<AuditRowWithUser | null> {
  const { rows } = await tx.query<AuditRowWithUser>(
    `select ${COLUMNS}, u.name as user_name, u.role as user_role
       from audit_logs a left join users u on a.actor_type = 'user' and u.id = a.actor_id
      where a.id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

// --- verification ------------------------------------------------------------------------------

export interface ChainState {
  pending: number;
  lastSeq: number;
  anchorSeq: number | null;
  anchorChecksum: string | null;
}

export async function chainState(tx: Queryable, chainId: string): Promise<ChainState> {
  const { rows } = await tx.query<{ pending: number; last_seq: number | null; anchor_seq: number | null; anchor_checksum: string | null }>(
    `select (select count(*)::int from audit_logs where chain_id = $1 and seq is null) as pending,
            c.last_seq, a.anchor_seq, a.anchor_checksum
       from (select 1) one left join audit_chains c on c.chain_id = $1 left join audit_chain_anchors a on a.chain_id = $1`,
    [chainId],
  );
  const row = rows[0]!;
  return { pending: row.pending, lastSeq: row.last_seq ?? 0, anchorSeq: row.anchor_seq, anchorChecksum: row.anchor_checksum };
}

/** Sealed rows of a chain in seq order, one bounded page after `afterSeq`. */
export async function sealedRowsAfter(tx: Queryable, chainId: string, afterSeq: number, toSeq: number | null, limit: number): Promise<ChainRow[]> {
  const { rows } = await tx.query<ChainRow>(
    `select ${CHAIN_COLUMNS} from audit_logs a
      where a.chain_id = $1 and a.seq > $2 and ($3::bigint is null or a.seq <= $3)
      order by a.seq limit $4`,
    [chainId, afterSeq, toSeq, limit],
  );
  return rows;
}

/**
 * A sealed row as verification reads it: one array per row, in this column order, without the
 * columns the chain already names (`org_id` is the chain's; the id is looked up only for a break).
 */
export type ChainLinkRow = [
  seq: number, ts: string, actorType: string, actorId: string | null, actorEmail: string | null, action: string,
  resourceType: string | null, resourceId: string | null, resourceName: string | null, details: Record<string, unknown>,
  ipAddress: string | null, userAgent: string | null, result: string, errorMessage: string | null,
  prevChecksum: string | null, checksum: string,
];

export async function chainLinksAfter(tx: Queryable, chainId: string, afterSeq: number, toSeq: number | null, limit: number): Promise<ChainLinkRow[]> {
  // Index order, stopping at the limit. Without statistics (PGlite never analyzes; a freshly sealed
  // table) the planner chose a bitmap scan that read and sorted the whole rest of the chain per batch.
  await tx.query('set local enable_bitmapscan = off');
  const { rows } = await tx.query<ChainLinkRow>(
    `select a.seq, to_char(a.timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), a.actor_type, a.actor_id, a.actor_email,
            a.action, a.resource_type, a.resource_id, a.resource_name, a.details, a.ip_address, a.user_agent, a.result,
            a.error_message, a.prev_checksum, a.checksum
       from audit_logs a
      where a.chain_id = $1 and a.seq > $2 and ($3::bigint is null or a.seq <= $3)
      order by a.seq limit $4`,
    [chainId, afterSeq, toSeq, limit],
    { rowMode: 'array' },
  );
  return rows;
}

/** The id of the row at a seq: named in a verification's `brokenAt`. */
export async function rowIdAt(tx: Queryable, chainId: string, seq: number): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(`select id from audit_logs where chain_id = $1 and seq = $2`, [chainId, seq]);
  return rows[0]?.id ?? null;
}

/** The lowest row still stored at or below `seq` (a chain's anchor: there should be none). */
export async function rowAtOrBelow(tx: Queryable, chainId: string, seq: number): Promise<{ seq: number; id: string } | null> {
  const { rows } = await tx.query<{ seq: number; id: string }>(
    `select seq, id from audit_logs where chain_id = $1 and seq <= $2 order by seq limit 1`,
    [chainId, seq],
  );
  return rows[0] ?? null;
}

export async function sealedRowAt(tx: Queryable, chainId: string, seq: number): Promise<{ seq: number; checksum: string } | null> {
  const { rows } = await tx.query<{ seq: number; checksum: string }>(
    `select seq, checksum from audit_logs where chain_id = $1 and seq = $2`,
    [chainId, seq],
  );
  return rows[0] ?? null;
}

/**
 * What changes whenever a row of a chain with afterSeq < seq <= toSeq is written, rewritten or
 * removed, by any path (triggers off included): how many there are and the sum of their xmin, the
 * transaction that wrote each row version (a rewritten row always gets a newer one).
 */
export async function chainRowVersions(tx: Queryable, chainId: string, afterSeq: number, toSeq: number): Promise<{ rows: number; xminSum: string }> {
  const { rows } = await tx.query<{ rows: number; xmin_sum: string }>(
    `select count(*)::int as rows, coalesce(sum(xmin::text::bigint), 0)::text as xmin_sum
       from audit_logs where chain_id = $1 and seq > $2 and seq <= $3`,
    [chainId, afterSeq, toSeq],
  );
  return { rows: rows[0]!.rows, xminSum: rows[0]!.xmin_sum };
}
