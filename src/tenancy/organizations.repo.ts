// SQL for organizations. Soft-deleted organizations are invisible to every query here.
import type { Queryable } from '../db/database.js';
import { columnValues, type ColumnMap } from '../db/columns.js';
import { substringPattern } from '../db/like.js';
import { queryPage } from '../db/pages.js';

export interface OrganizationRow {
  id: string;
  partner_id: string;
  name: string;
  slug: string;
  type: string;
  status: string;
  max_devices: number | null;
  settings: Record<string, unknown>;
  sso_config: Record<string, unknown> | null;
  contract_start: Date | null;
  contract_end: Date | null;
  billing_contact: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

const COLUMNS = `o.id, o.partner_id, o.name, o.slug, o.type, o.status, o.max_devices, o.settings, o.sso_config, o.contract_start,
  o.contract_end, o.billing_contact, o.created_at, o.updated_at, o.deleted_at`;

export const ORGANIZATION_FIELDS = {
  name: 'name',
  slug: 'slug',
  type: 'type',
  status: 'status',
  maxDevices: 'max_devices',
  settings: 'settings',
  ssoConfig: 'sso_config',
  contractStart: 'contract_start',
  contractEnd: 'contract_end',
  billingContact: 'billing_contact',
} as const;
export type OrganizationField = keyof typeof ORGANIZATION_FIELDS;
export type OrganizationValues = Partial<Record<OrganizationField, unknown>>;

const ORGANIZATION_COLUMNS: ColumnMap<OrganizationField> = { columns: ORGANIZATION_FIELDS, json: new Set(['settings', 'ssoConfig', 'billingContact']) };

/**
 * Live organizations, ordered as API.md §4 says: by the partner's organizationOrder when it has one
 * (the rest after, in registration order), otherwise by name. `search` keeps those whose name holds
 * it (API.md §4: literal, case-insensitive), in the same order. With a page, the total comes in the
 * same statement (none with skipCount); without one (GET /orgs), every row and no total.
 */
export async function listOrganizations(
  tx: Queryable,
  filter: { partnerId?: string; ids?: readonly string[] | null; search?: string; partnerOrder: boolean },
  page: { limit: number; offset: number; withTotal?: boolean } | null,
): Promise<{ rows: OrganizationRow[]; total: number | null }> {
  const where = ['o.deleted_at is null'];
  const params: unknown[] = [];
  if (filter.partnerId) where.push(`o.partner_id = $${params.push(filter.partnerId)}`);
  if (filter.ids) where.push(`o.id = any($${params.push(filter.ids)}::uuid[])`);
  if (filter.search !== undefined) where.push(`o.name ilike $${params.push(substringPattern(filter.search))}`);
  const clause = where.join(' and ');
  const rows = `select ${COLUMNS} from organizations o
       left join partners p on p.id = o.partner_id
       left join lateral (
         select array_position(array(select jsonb_array_elements_text(p.settings -> 'organizationOrder')), o.id::text) as position
       ) ord on true
      where ${clause}
      order by ${filter.partnerOrder ? `ord.position nulls last, case when p.settings ? 'organizationOrder' then o.created_at end, ` : ''}o.name, o.id`;
  if (!page) return { rows: (await tx.query<OrganizationRow>(rows, params)).rows, total: null };
  return queryPage<OrganizationRow>(tx, {
    rows: `${rows} limit $${params.length + 1} offset $${params.length + 2}`,
    count: page.withTotal === false ? null : `select count(*)::int from organizations o where ${clause}`,
    params: [...params, page.limit, page.offset],
  });
}

/** A live organization; `forUpdate` locks it (an ssoConfig write keeps the stored secret). */
export async function findOrganization(tx: Queryable, id: string, forUpdate = false): Promise<OrganizationRow | null> {
  const { rows } = await tx.query<OrganizationRow>(`select ${COLUMNS} from organizations o where o.id = $1 and o.deleted_at is null${forUpdate ? ' for update' : ''}`, [id]);
  return rows[0] ?? null;
}

/** Locks the partner row (serialising creations under a cap) and returns its cap; null when the partner is gone. */
export async function lockPartner(tx: Queryable, partnerId: string): Promise<{ max_organizations: number | null } | null> {
  const { rows } = await tx.query<{ max_organizations: number | null }>(
    `select max_organizations from partners where id = $1 and deleted_at is null for update`,
    [partnerId],
  );
  return rows[0] ?? null;
}

/**
 * Inserts the organization unless its partner already has `cap` live ones; null when it has. Run
 * after lockPartner, in a statement of its own: a statement's snapshot is taken when it starts, so
 * only a count begun after the lock was granted sees the organizations the previous holder added.
 */
export async function insertOrganization(tx: Queryable, id: string, partnerId: string, values: OrganizationValues, cap: number | null): Promise<OrganizationRow | null> {
  const { columns, params } = columnValues(ORGANIZATION_COLUMNS, values);
  const { rows } = await tx.query<OrganizationRow>(
    `insert into organizations as o (id, partner_id${columns.map((c) => `, ${c}`).join('')})
     select $1, $2${columns.map((_, i) => `, $${i + 4}`).join('')}
      where $3::int is null or (select count(*) from organizations where partner_id = $2 and deleted_at is null) < $3::int
     returning ${COLUMNS}`,
    [id, partnerId, cap, ...params],
  );
  return rows[0] ?? null;
}

/** What a PATCH can change, as JSON (no dates but the contract's): the "before" of its audit entry. */
const BEFORE = `json_build_object('name', b.name, 'slug', b.slug, 'type', b.type, 'status', b.status, 'max_devices', b.max_devices,
  'settings', b.settings, 'sso_config', b.sso_config, 'contract_start', b.contract_start, 'contract_end', b.contract_end,
  'billing_contact', b.billing_contact)`;

/** A contract date as the API compares them (at millisecond precision, like the stored value). */
const contractDate = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string).toISOString());

/**
 * Updates a live organization in one statement and returns it as it was and as it is (the old row
 * read locked, so "before" is the latest committed version). The contract must not end before it
 * starts, given and kept dates together; null when the organization is missing or that check fails.
 */
export async function updateOrganization(tx: Queryable, id: string, values: OrganizationValues): Promise<{ before: OrganizationRow; after: OrganizationRow } | null> {
  const { columns, params } = columnValues(ORGANIZATION_COLUMNS, values);
  const all: unknown[] = [id, ...params];
  const sets = columns.map((c, i) => `${c} = $${i + 2}`);
  // As the API always compared them: a date given as null falls back to the kept one.
  const dated = (field: 'contractStart' | 'contractEnd', kept: string) =>
    values[field] === undefined ? kept : `coalesce($${all.push(contractDate(values[field]))}::timestamptz, ${kept})`;
  const start = dated('contractStart', 'b.contract_start');
  const end = dated('contractEnd', 'b.contract_end');
  const { rows } = await tx.query<OrganizationRow & { before: Record<string, unknown> }>(
    `update organizations as o set ${sets.join(', ')}
       from (select * from organizations where id = $1 and deleted_at is null for update) b
      where o.id = b.id and not coalesce(${start} > ${end}, false)
      returning ${COLUMNS}, ${BEFORE} as before`,
    all,
  );
  const row = rows[0];
  if (!row) return null;
  const { before, ...after } = row;
  const date = (v: unknown) => (v === null ? null : new Date(v as string));
  return { before: { ...after, ...before, contract_start: date(before.contract_start), contract_end: date(before.contract_end) } as OrganizationRow, after };
}

/** Soft-deletes a live organization and returns it; null when there is none. */
export async function softDeleteOrganization(tx: Queryable, id: string, at: Date): Promise<OrganizationRow | null> {
  const { rows } = await tx.query<OrganizationRow>(
    `update organizations as o set deleted_at = $2 where o.id = $1 and o.deleted_at is null returning ${COLUMNS}`,
    [id, at],
  );
  return rows[0] ?? null;
}

/**
 * The partner's live organizations in registration order, for cleaning an order list, with the
 * partner's row locked so order writes (and creations) take turns. Empty when the partner is gone.
 */
/** The partner's live organizations in registration order, its row locked; null when the partner is gone. */
export async function lockedRegistrationOrder(tx: Queryable, partnerId: string): Promise<string[] | null> {
  const { rows } = await tx.query<{ id: string | null }>(
    `select o.id from partners p
       left join lateral (select id, created_at from organizations where partner_id = p.id and deleted_at is null) o on true
      where p.id = $1 and p.deleted_at is null
      order by o.created_at, o.id
      for update of p`,
    [partnerId],
  );
  if (rows.length === 0) return null;
  return rows.flatMap((r) => (r.id === null ? [] : [r.id]));
}

export async function setOrganizationOrder(tx: Queryable, partnerId: string, order: string[]): Promise<void> {
  await tx.query(`update partners set settings = jsonb_set(settings, '{organizationOrder}', $2::jsonb) where id = $1`, [partnerId, JSON.stringify(order)]);
}
