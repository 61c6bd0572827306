// SQL for partners. Deleted partners (deleted_at set) are invisible to every query here.
import type { Queryable } from '../db/database.js';
import { columnValues, type ColumnMap } from '../db/columns.js';
import { queryPage } from '../db/pages.js';

export type PartnerStatus = 'pending' | 'active' | 'suspended' | 'churned';

export interface PartnerSummary {
  id: string;
  name: string;
  slug: string;
  status: PartnerStatus;
}

export interface PartnerRow extends PartnerSummary {
  type: string;
  plan: string;
  max_organizations: number | null;
  max_devices: number | null;
  settings: Record<string, unknown>;
  sso_config: Record<string, unknown> | null;
  billing_email: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

const COLUMN_NAMES = ['id', 'name', 'slug', 'type', 'plan', 'status', 'max_organizations', 'max_devices', 'settings', 'sso_config',
  'billing_email', 'created_at', 'updated_at', 'deleted_at'];
const COLUMNS = COLUMN_NAMES.join(', ');

/** Writable columns, by API field name. */
export const PARTNER_FIELDS = {
  name: 'name',
  slug: 'slug',
  type: 'type',
  plan: 'plan',
  status: 'status',
  maxOrganizations: 'max_organizations',
  maxDevices: 'max_devices',
  billingEmail: 'billing_email',
  settings: 'settings',
  ssoConfig: 'sso_config',
} as const;
export type PartnerField = keyof typeof PARTNER_FIELDS;
export type PartnerValues = Partial<Record<PartnerField, unknown>>;

const PARTNER_COLUMNS: ColumnMap<PartnerField> = { columns: PARTNER_FIELDS, json: new Set(['settings', 'ssoConfig']) };

/**
 * A pending partner (self-signup): `slug`, or `slug-suffix` when a live partner holds `slug`
 * already, decided in the insert itself.
 */
export async function insertPendingPartner(tx: Queryable, name: string, slug: string, suffix: string): Promise<PartnerRow> {
  const { rows } = await tx.query<PartnerRow>(
    `insert into partners (name, slug, status)
     select $1, case when exists (select 1 from partners where slug = $2 and deleted_at is null) then $2 || '-' || $3 else $2 end, 'pending'
     returning ${COLUMNS}`,
    [name, slug, suffix],
  );
  return rows[0]!;
}

export async function insertPartner(tx: Queryable, values: PartnerValues & { name: string; slug: string }): Promise<PartnerRow> {
  const { columns, params } = columnValues(PARTNER_COLUMNS, values);
  const { rows } = await tx.query<PartnerRow>(
    `insert into partners (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')}) returning ${COLUMNS}`,
    params,
  );
  return rows[0]!;
}

/** A live partner; `forUpdate` locks it (a settings merge reads what it will write over). */
export async function findPartner(tx: Queryable, id: string, forUpdate = false): Promise<PartnerRow | null> {
  const { rows } = await tx.query<PartnerRow>(`select ${COLUMNS} from partners where id = $1 and deleted_at is null${forUpdate ? ' for update' : ''}`, [id]);
  return rows[0] ?? null;
}

export async function listPartners(tx: Queryable, limit: number, offset: number, withTotal = true): Promise<{ rows: PartnerRow[]; total: number | null }> {
  return queryPage<PartnerRow>(tx, {
    rows: `select ${COLUMNS} from partners where deleted_at is null order by created_at desc, id desc limit $1 offset $2`,
    count: withTotal ? `select count(*)::int from partners where deleted_at is null` : null,
    params: [limit, offset],
  });
}

/** What a PATCH can change, as JSON: the "before" of its audit entry. */
const BEFORE = `json_build_object('name', b.name, 'slug', b.slug, 'type', b.type, 'plan', b.plan, 'status', b.status,
  'max_organizations', b.max_organizations, 'max_devices', b.max_devices, 'settings', b.settings, 'sso_config', b.sso_config,
  'billing_email', b.billing_email)`;

/**
 * Updates a live partner in one statement and returns it as it was and as it is (the old row read
 * locked, so "before" is the latest committed version); null when there is no such partner.
 */
export async function updatePartner(tx: Queryable, id: string, values: PartnerValues): Promise<{ before: PartnerRow; after: PartnerRow } | null> {
  const { columns, params } = columnValues(PARTNER_COLUMNS, values);
  const { rows } = await tx.query<PartnerRow & { before: Partial<PartnerRow> }>(
    `update partners p set ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')}
       from (select * from partners where id = $1 and deleted_at is null for update) b
      where p.id = b.id
      returning ${COLUMN_NAMES.map((c) => `p.${c}`).join(', ')}, ${BEFORE} as before`,
    [id, ...params],
  );
  const row = rows[0];
  if (!row) return null;
  const { before, ...after } = row;
  return { before: { ...after, ...before }, after };
}

export async function softDeletePartner(tx: Queryable, id: string, at: Date): Promise<PartnerRow | null> {
  const { rows } = await tx.query<PartnerRow>(
    `update partners set deleted_at = $2 where id = $1 and deleted_at is null returning ${COLUMNS}`,
    [id, at],
  );
  return rows[0] ?? null;
}
