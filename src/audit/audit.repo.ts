// SQL for the audit log: appending, sealing, listing, searching and walking a chain. An entry's
// wide row (audit_entries) is written once; its place in the chain is a row of audit_seals, and
// while it has none it waits in audit_pending (migrations/0012).
import type { Queryable, Transaction } from '../db/database.js';
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
const TS = `to_char(a.timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** An entry `a` with its seal `s`: the columns of a row as the chain and the lists see it. */
const CHAIN_COLUMNS = `a.id, a.org_id, s.seq, ${TS} as ts, a.actor_type, a.actor_id, a.actor_email, a.action, a.resource_type,
  a.resource_id, a.resource_name, a.details, a.ip_address, a.user_agent, a.result, a.error_message, s.prev_checksum, s.checksum`;

export const COLUMNS = `a.id, a.org_id, s.seq, a.timestamp, a.actor_type, a.actor_id, a.actor_email, a.action, a.resource_type,
  a.resource_id, a.resource_name, a.details, a.ip_address, a.user_agent, a.result, a.error_message, s.prev_checksum, s.checksum`;

// An entry and its seal, or a seal and its entry, are found one by one by key (chain_id,
// pending_order), never joined wholesale: without statistics (PGlite never analyzes; a fresh
// table) the planner joined whole chains to find a page of rows. OFFSET 0 keeps each a lookup.

/** The seal of each entry `a` (null columns while pending); a seal counts only in its entry's own chain. */
const SEAL_OF_ENTRY = `left join lateral (select s.seq, s.prev_checksum, s.checksum from audit_seals s
  where s.chain_id = a.chain_id and s.pending_order = a.pending_order offset 0) s on true`;

/** The entry of each seal `s`: with seals read in (chain_id, seq) order, consecutive lookups stay on the same pages. */
const ENTRY_OF_SEAL = `cross join lateral (select * from audit_entries e
  where e.chain_id = s.chain_id and e.pending_order = s.pending_order offset 0) a`;

/** A page of entries `a` (a query already filtered, ordered and cut) in the row shape of the lists. */
export function pageWithSeals(page: string): string {
  return `select ${COLUMNS}, u.name as user_name, u.role as user_role
            from (${page}) a ${SEAL_OF_ENTRY}
            left join users u on a.actor_type = 'user' and u.id = a.actor_id
           order by a.timestamp desc, a.id desc`;
}

/** Sealed rows `s` with their entries `a`, and their actors' names: a chain read in seq order. */
export const SEALS_WITH_ENTRIES = `audit_seals s ${ENTRY_OF_SEAL} left join users u on a.actor_type = 'user' and u.id = a.actor_id`;

/**
 * For the rest of a transaction, reads walk an index in its order and look rows up one by one:
 * for chain reads that stop at a limit, whose best plan the planner misses without statistics.
 * Sequential scans too: on a young table, whose statistics still say it is nearly empty, the
 * sealer looked each pending entry up by scanning every entry of the table (2.6 ms a batch at 850
 * rows, growing with the table until autovacuum's next analyze).
 */
export const INDEX_ORDER_ONLY = `select set_config('enable_bitmapscan', 'off', true), set_config('enable_hashjoin', 'off', true),
  set_config('enable_mergejoin', 'off', true), set_config('enable_seqscan', 'off', true)`;

export type NewAuditRow = Omit<AuditRow, 'seq' | 'prev_checksum' | 'checksum'>;

/** Sent with the transaction's next statement or its COMMIT (Transaction.queryLater): an entry costs no round trip of its own. */
export function insertAuditRow(tx: Transaction, row: NewAuditRow): void {
  tx.queryLater(
    `insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id,
       resource_name, details, ip_address, user_agent, result, error_message)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      row.id, row.org_id, row.timestamp, row.actor_type, row.actor_id, row.actor_email, row.action, row.resource_type,
      row.resource_id, row.resource_name, JSON.stringify(row.details), row.ip_address, row.user_agent, row.result, row.error_message,
    ],
  );
}

// --- sealing -----------------------------------------------------------------------------------

/** The chains with entries waiting, one step down the queue's index each (a loose index scan). */
export async function chainsWithPendingRows(tx: Queryable): Promise<{ chain_id: string; org_id: string | null }[]> {
  const { rows } = await tx.query<{ chain_id: string }>(
    `with recursive c as (
       (select chain_id from audit_pending order by chain_id limit 1)
       union all
       select (select p.chain_id from audit_pending p where p.chain_id > c.chain_id order by p.chain_id limit 1) from c where c.chain_id is not null
     )
     select chain_id from c where chain_id is not null`,
  );
  return rows.map((r) => ({ chain_id: r.chain_id, org_id: r.chain_id === PLATFORM_CHAIN_ID ? null : r.chain_id }));
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

export interface PendingRow extends ChainRow {
  pending_order: number;
}

/**
 * The chain's oldest pending entries, in insertion order: the head of its queue, read in index
 * order up to the limit, then each entry by its key. A bitmap scan (the plan for a queue without
 * statistics) read every queue row the chain ever had, sealed ones included until vacuum.
 */
export async function pendingRows(tx: Queryable, chainId: string, limit: number): Promise<PendingRow[]> {
  await tx.query(INDEX_ORDER_ONLY);
  const { rows } = await tx.query<PendingRow>(
    `select a.id, a.org_id, null::bigint as seq, ${TS} as ts, a.actor_type, a.actor_id, a.actor_email, a.action, a.resource_type,
            a.resource_id, a.resource_name, a.details, a.ip_address, a.user_agent, a.result, a.error_message,
            null::text as prev_checksum, null::text as checksum, p.pending_order
       from (select chain_id, pending_order from audit_pending where chain_id = $1 order by pending_order limit $2) p
       cross join lateral (select * from audit_entries e where e.chain_id = p.chain_id and e.pending_order = p.pending_order offset 0) a
      order by p.pending_order`,
    [chainId, limit],
  );
  return rows;
}

/**
 * Appends the seals of a batch and moves the chain's head, in one statement. The seals' trigger
 * takes each entry off the queue, and refuses the batch if one was not pending in this chain.
 */
export async function appendSeals(
  tx: Queryable,
  chainId: string,
  orgId: string | null,
  seals: { pendingOrder: number; seq: number; prevChecksum: string | null; checksum: string }[],
): Promise<void> {
  const last = seals[seals.length - 1]!;
  await tx.query(
    `with sealed as (
       insert into audit_seals (org_id, seq, pending_order, prev_checksum, checksum)
       select $2::uuid, seq, pending_order, prev, sum
         from unnest($3::bigint[], $4::bigint[], $5::text[], $6::text[]) as b (seq, pending_order, prev, sum)
     )
     update audit_chains set last_seq = $7, last_checksum = $8 where chain_id = $1`,
    [chainId, orgId, seals.map((s) => s.seq), seals.map((s) => s.pendingOrder), seals.map((s) => s.prevChecksum), seals.map((s) => s.checksum), last.seq, last.checksum],
  );
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

/**
 * Searches and date ranges: unnamed, so each is planned for its values (a trigram index for one
 * pattern, the (org_id, timestamp) index for another); a generic plan would pick one for all.
 */
export const VALUE_DEPENDENT_PLAN = { prepare: false } as const;

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
  if (query.q && withTotal) return searchWithTotal(tx, sql, params, limit, offset);
  // The page is chosen from the entries alone, as before seals had a table of their own.
  const { rows } = await tx.query<AuditRowWithUser>(
    pageWithSeals(`select a.* from audit_entries a ${sql} order by a.timestamp desc, a.id desc
                    limit $${params.length + 1} offset $${params.length + 2}`),
    [...params, limit, offset],
    VALUE_DEPENDENT_PLAN,
  );
  if (!withTotal) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total from audit_entries a ${sql}`, params, VALUE_DEPENDENT_PLAN);
  return { rows, total: count.rows[0]!.total };
}

/**
 * A free-text search reads every match however few it shows (the trigram index scan and the
 * recheck are most of its cost): the matches are found once, counted, and the page picked from
 * them, instead of a page query and a count query each doing the scan.
 */
async function searchWithTotal(tx: Queryable, where: string, params: unknown[], limit: number, offset: number) {
  const { rows: [found] } = await tx.query<{ total: number; ids: string[] }>(
    `with hits as materialized (select a.timestamp, a.id from audit_entries a ${where})
     select (select count(*)::int from hits) as total,
            array(select id::text from hits order by timestamp desc, id desc limit $${params.length + 1} offset $${params.length + 2}) as ids`,
    [...params, limit, offset],
    VALUE_DEPENDENT_PLAN,
  );
  if (found!.ids.length === 0) return { rows: [], total: found!.total };
  const { rows } = await tx.query<AuditRowWithUser>(
    pageWithSeals('select a.* from audit_entries a where a.id = any($1::uuid[])'),
    [found!.ids],
  );
  return { rows, total: found!.total };
}

export async function findAuditRow(tx: Queryable, id: string): Promise<AuditRowWithUser | null> {
  const { rows } = await tx.query<AuditRowWithUser>(pageWithSeals('select a.* from audit_entries a where a.id = $1'), [id]);
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
    `select (select count(*)::int from audit_pending where chain_id = $1) as pending,
            c.last_seq, a.anchor_seq, a.anchor_checksum
       from (select 1) one left join audit_chains c on c.chain_id = $1 left join audit_chain_anchors a on a.chain_id = $1`,
    [chainId],
  );
  const row = rows[0]!;
  return { pending: row.pending, lastSeq: row.last_seq ?? 0, anchorSeq: row.anchor_seq, anchorChecksum: row.anchor_checksum };
}

/** Sealed rows of a chain in seq order, one bounded page after `afterSeq`. */
export async function sealedRowsAfter(tx: Queryable, chainId: string, afterSeq: number, toSeq: number | null, limit: number): Promise<ChainRow[]> {
  await tx.query(INDEX_ORDER_ONLY);
  const { rows } = await tx.query<ChainRow>(
    `select ${CHAIN_COLUMNS} from audit_seals s ${ENTRY_OF_SEAL}
      where s.chain_id = $1 and s.seq > $2 and ($3::bigint is null or s.seq <= $3)
      order by s.seq limit $4`,
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
  // Index order, stopping at the limit, each entry looked up by its seal. Without statistics (PGlite
  // never analyzes; a freshly sealed table) the planner chose a bitmap scan that read and sorted
  // the whole rest of the chain per batch; a hash join would read all of the chain's entries.
  await tx.query(INDEX_ORDER_ONLY);
  const { rows } = await tx.query<ChainLinkRow>(
    `select s.seq, ${TS}, a.actor_type, a.actor_id, a.actor_email, a.action, a.resource_type, a.resource_id, a.resource_name,
            a.details, a.ip_address, a.user_agent, a.result, a.error_message, s.prev_checksum, s.checksum
       from audit_seals s ${ENTRY_OF_SEAL}
      where s.chain_id = $1 and s.seq > $2 and ($3::bigint is null or s.seq <= $3)
      order by s.seq limit $4`,
    [chainId, afterSeq, toSeq, limit],
    { rowMode: 'array' },
  );
  return rows;
}

/** The id of the row at a seq: named in a verification's `brokenAt`. */
export async function rowIdAt(tx: Queryable, chainId: string, seq: number): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(`select a.id from audit_seals s ${ENTRY_OF_SEAL} where s.chain_id = $1 and s.seq = $2`, [chainId, seq]);
  return rows[0]?.id ?? null;
}

/** The lowest row still stored at or below `seq` (a chain's anchor: there should be none). */
export async function rowAtOrBelow(tx: Queryable, chainId: string, seq: number): Promise<{ seq: number; id: string | null } | null> {
  const { rows } = await tx.query<{ seq: number; id: string | null }>(
    `select s.seq, a.id from audit_seals s
       left join lateral (select e.id from audit_entries e where e.chain_id = s.chain_id and e.pending_order = s.pending_order offset 0) a on true
      where s.chain_id = $1 and s.seq <= $2 order by s.seq limit 1`,
    [chainId, seq],
  );
  return rows[0] ?? null;
}

/** The sealed row at a seq, whole: its seal and its entry (a range's link to the row before it). */
export async function sealedRowAt(tx: Queryable, chainId: string, seq: number): Promise<{ seq: number; checksum: string } | null> {
  const { rows } = await tx.query<{ seq: number; checksum: string }>(
    `select s.seq, s.checksum from audit_seals s ${ENTRY_OF_SEAL} where s.chain_id = $1 and s.seq = $2`,
    [chainId, seq],
  );
  return rows[0] ?? null;
}

/**
 * What changes whenever a row of a chain with afterSeq < seq <= toSeq is written, rewritten or
 * removed, by any path (triggers off included): how many there are and the sum of their xmin, the
 * transaction that wrote each row version (a rewritten row always gets a newer one). A row is a
 * seal and its entry: the seals of the range, and the chain's entries between the lowest and
 * highest pending_order those seals name (a superset: an entry sealed elsewhere in the chain may
 * count too, which costs a needless run at worst). Two index range scans, no join, so the cost
 * stays that of reading the range once.
 */
export async function chainRowVersions(tx: Queryable, chainId: string, afterSeq: number, toSeq: number): Promise<{ rows: number; xminSum: string }> {
  const { rows } = await tx.query<{ rows: number; xmin_sum: string }>(
    `with s as (
       select count(*)::int as n, coalesce(sum(xmin::text::bigint), 0) as x, min(pending_order) as lo, max(pending_order) as hi
         from audit_seals where chain_id = $1 and seq > $2 and seq <= $3
     )
     select s.n + e.n as rows, (s.x + e.x)::text as xmin_sum
       from s, lateral (select count(*)::int as n, coalesce(sum(xmin::text::bigint), 0) as x
                          from audit_entries where chain_id = $1 and pending_order between s.lo and s.hi) e`,
    [chainId, afterSeq, toSeq],
  );
  return { rows: rows[0]!.rows, xminSum: rows[0]!.xmin_sum };
}
