// SQL for organizations. Soft-deleted organizations are invisible to every query here.
import type { Queryable } from '../db/database.js';
import { columnValues, type ColumnMap } from '../db/columns.js';

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
 * (the rest after, in registration order), otherwise by name.
 */
export async function listOrganizations(
  tx: Queryable,
  filter: { partnerId?: string; ids?: readonly string[] | null; partnerOrder: boolean },
  page: { limit: number; offset: number; withTotal?: boolean } | null,
): Promise<{ rows: OrganizationRow[]; total: number | null }> {
  const where = ['o.deleted_at is null'];
  const params: unknown[] = [];
  if (filter.partnerId) where.push(`o.partner_id = $${params.push(filter.partnerId)}`);
  if (filter.ids) where.push(`o.id = any($${params.push(filter.ids)}::uuid[])`);
  const clause = where.join(' and ');
  const paging = page ? ` limit $${params.length + 1} offset $${params.length + 2}` : '';
  const { rows } = await tx.query<OrganizationRow>(
    `select ${COLUMNS} from organizations o
       left join partners p on p.id = o.partner_id
       left join lateral (
         select array_position(array(select jsonb_array_elements_text(p.settings -> 'organizationOrder')), o.id::text) as position
       ) ord on true
      where ${clause}
      order by ${filter.partnerOrder ? `ord.position nulls last, case when p.settings ? 'organizationOrder' then o.created_at end, ` : ''}o.name, o.id${paging}`,
    page ? [...params, page.limit, page.offset] : params,
  );
  if (page?.withTotal === false) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total from organizations o where ${clause}`, params);
  return { rows, total: count.rows[0]!.total };
}

export async function findOrganization(tx: Queryable, id: string): Promise<OrganizationRow | null> {
  const { rows } = await tx.query<OrganizationRow>(`select ${COLUMNS} from organizations o where o.id = $1 and o.deleted_at is null`, [id]);
  return rows[0] ?? null;
}

/** Locks the partner row (serialising creations under a cap, and order writes) and returns what the rules need. */
export async function lockPartner(tx: Queryable, partnerId: string): Promise<{ max_organizations: number | null; live: number } | null> {
  const { rows } = await tx.query<{ max_organizations: number | null }>(
    `select max_organizations from partners where id = $1 and deleted_at is null for update`,
    [partnerId],
  );
  if (!rows[0]) return null;
  const count = await tx.query<{ live: number }>(`select count(*)::int as live from organizations where partner_id = $1 and deleted_at is null`, [partnerId]);
  return { max_organizations: rows[0].max_organizations, live: count.rows[0]!.live };
}

export async function insertOrganization(tx: Queryable, id: string, partnerId: string, values: OrganizationValues): Promise<void> {
  const { columns, params } = columnValues(ORGANIZATION_COLUMNS, values);
  await tx.query(
    `insert into organizations (id, partner_id${columns.map((c) => `, ${c}`).join('')})
     values ($1, $2${columns.map((_, i) => `, $${i + 3}`).join('')})`,
    [id, partnerId, ...params],
  );
}

export async function updateOrganization(tx: Queryable, id: string, values: OrganizationValues): Promise<void> {
  const { columns, params } = columnValues(ORGANIZATION_COLUMNS, values);
  await tx.query(`update organizations set ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')} where id = $1 and deleted_at is null`, [id, ...params]);
}

export async function softDeleteOrganization(tx: Queryable, id: string, at: Date): Promise<void> {
  await tx.query(`update organizations set deleted_at = $2 where id = $1 and deleted_at is null`, [id, at]);
}

/** The partner's live organizations in registration order, for cleaning an order list. */
export async function registrationOrder(tx: Queryable, partnerId: string): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    `select id from organizations where partner_id = $1 and deleted_at is null order by created_at, id`,
    [partnerId],
  );
  return rows.map((r) => r.id);
}

export async function setOrganizationOrder(tx: Queryable, partnerId: string, order: string[]): Promise<void> {
  await tx.query(`update partners set settings = jsonb_set(settings, '{organizationOrder}', $2::jsonb) where id = $1`, [partnerId, JSON.stringify(order)]);
}
