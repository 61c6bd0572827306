// SQL for sites (hard-deleted; reachable only through a live organization).
import type { Queryable } from '../db/database.js';
import { columnValues, type ColumnMap } from '../db/columns.js';
import { substringPattern } from '../db/like.js';
import { queryPage } from '../db/pages.js';

export interface SiteRow {
  id: string;
  org_id: string;
  name: string;
  address: Record<string, unknown> | null;
  timezone: string;
  contact: Record<string, unknown> | null;
  settings: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `s.id, s.org_id, s.name, s.address, s.timezone, s.contact, s.settings, s.created_at, s.updated_at`;

export const SITE_FIELDS = { name: 'name', address: 'address', timezone: 'timezone', contact: 'contact', settings: 'settings' } as const;
export type SiteField = keyof typeof SITE_FIELDS;
export type SiteValues = Partial<Record<SiteField, unknown>>;

const SITE_COLUMNS: ColumnMap<SiteField> = { columns: SITE_FIELDS, json: new Set(['address', 'contact', 'settings']) };

/** Where a site lives, read in the system scope: tells "no such site" (404) from "not yours" (403). */
export async function locateSite(tx: Queryable, id: string): Promise<{ org_id: string } | null> {
  const { rows } = await tx.query<{ org_id: string }>(
    `select s.org_id from sites s join organizations o on o.id = s.org_id and o.deleted_at is null where s.id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** A site of a live organization, as far as the transaction's scope can see. */
export async function findSite(tx: Queryable, id: string): Promise<SiteRow | null> {
  const { rows } = await tx.query<SiteRow>(
    `select ${COLUMNS} from sites s join organizations o on o.id = s.org_id and o.deleted_at is null where s.id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** Like findSite, locked for a delete, and whether any device (decommissioned ones too) is still on it. */
export async function findSiteForDelete(tx: Queryable, id: string): Promise<(SiteRow & { has_devices: boolean }) | null> {
  const { rows } = await tx.query<SiteRow & { has_devices: boolean }>(
    `select ${COLUMNS}, exists (select 1 from devices where site_id = s.id) as has_devices
       from sites s join organizations o on o.id = s.org_id and o.deleted_at is null where s.id = $1 for update of s`,
    [id],
  );
  return rows[0] ?? null;
}

/**
 * A page of sites by name, and its total in the same statement. Without a search the total is the
 * kept per-organization counts (migration 0007); a search (API.md §4: a literal, case-insensitive
 * substring of the name) counts the matching sites, unless `withTotal` is false (skipCount).
 */
export async function listSites(
  tx: Queryable,
  filter: { orgIds: readonly string[] | null; search?: string },
  page: { limit: number; offset: number; withTotal: boolean },
): Promise<{ rows: SiteRow[]; total: number | null }> {
  const { orgIds, search } = filter;
  const params: unknown[] = [];
  // Sites of a deleted organization are gone (SPEC: excluded from every query), also when a
  // system-scope caller names that organization: the join checks, whoever asks.
  const from = 'from sites s join organizations o on o.id = s.org_id';
  const inOrgs = orgIds ? ` and o.id in (select unnest($${params.push(orgIds)}::uuid[]))` : '';
  let where = `where o.deleted_at is null${inOrgs}`;
  if (search !== undefined) where += ` and s.name ilike $${params.push(substringPattern(search))}`;
  const count = !page.withTotal
    ? null
    : search !== undefined
      ? `select count(*)::int ${from} ${where}`
      : `select coalesce(sum(c.sites), 0)::int from organization_site_counts c join organizations o on o.id = c.org_id where o.deleted_at is null${inOrgs}`;
  return queryPage<SiteRow>(tx, {
    rows: `select ${COLUMNS} ${from} ${where} order by s.name, s.id limit $${params.length + 1} offset $${params.length + 2}`,
    count,
    params: [...params, page.limit, page.offset],
  });
}

export async function insertSite(tx: Queryable, orgId: string, values: SiteValues): Promise<SiteRow> {
  const { columns, params } = columnValues(SITE_COLUMNS, values);
  const { rows } = await tx.query<SiteRow>(
    `insert into sites as s (org_id${columns.map((c) => `, ${c}`).join('')})
     values ($1${columns.map((_, i) => `, $${i + 2}`).join('')}) returning ${COLUMNS}`,
    [orgId, ...params],
  );
  return rows[0]!;
}

/** The organization's first site, where enrolled devices go when nothing else places them. */
export async function oldestSiteId(tx: Queryable, orgId: string): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(`select id from sites where org_id = $1 order by created_at, id limit 1`, [orgId]);
  return rows[0]?.id ?? null;
}

/**
 * Updates a site of a live organization in one statement and returns it as it was and as it is:
 * the old row is read locked (FOR UPDATE), so "before" is the latest committed version even when
 * another request changed it a moment ago. Null when the scope cannot see the site.
 */
export async function updateSite(tx: Queryable, id: string, values: SiteValues): Promise<{ before: SiteRow; after: SiteRow } | null> {
  const { columns, params } = columnValues(SITE_COLUMNS, values);
  const { rows } = await tx.query<SiteRow & { before: SiteRow }>(
    `update sites as s set ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')}
       from (select ${COLUMNS} from sites s join organizations o on o.id = s.org_id and o.deleted_at is null
              where s.id = $1 for update of s) b
      where s.id = $1 and s.id = b.id
      returning ${COLUMNS}, json_build_object('name', b.name, 'address', b.address, 'timezone', b.timezone, 'contact', b.contact, 'settings', b.settings) as before`,
    [id, ...params],
  );
  const row = rows[0];
  if (!row) return null;
  const { before, ...after } = row;
  return { before: { ...after, ...before }, after };
}

export async function deleteSite(tx: Queryable, id: string): Promise<void> {
  await tx.query(`delete from sites where id = $1`, [id]);
}
