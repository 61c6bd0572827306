// SQL for partners. Deleted partners (deleted_at set) are invisible to every query here.
import type { Queryable } from '../db/database.js';
import { columnValues, type ColumnMap } from '../db/columns.js';

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

const COLUMNS = `id, name, slug, type, plan, status, max_organizations, max_devices, settings, sso_config, billing_email,
  created_at, updated_at, deleted_at`;

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

export async function liveSlugExists(tx: Queryable, slug: string): Promise<boolean> {
  const { rows } = await tx.query(`select 1 from partners where slug = $1 and deleted_at is null`, [slug]);
  return rows.length > 0;
}

export async function insertPartner(tx: Queryable, values: PartnerValues & { name: string; slug: string }): Promise<PartnerRow> {
  const { columns, params } = columnValues(PARTNER_COLUMNS, values);
  const { rows } = await tx.query<PartnerRow>(
    `insert into partners (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')}) returning ${COLUMNS}`,
    params,
  );
  return rows[0]!;
}

export async function findPartner(tx: Queryable, id: string): Promise<PartnerRow | null> {
  const { rows } = await tx.query<PartnerRow>(`select ${COLUMNS} from partners where id = $1 and deleted_at is null`, [id]);
  return rows[0] ?? null;
}

export async function listPartners(tx: Queryable, limit: number, offset: number, withTotal = true): Promise<{ rows: PartnerRow[]; total: number | null }> {
  const { rows } = await tx.query<PartnerRow>(
    `select ${COLUMNS} from partners where deleted_at is null order by created_at desc, id desc limit $1 offset $2`,
    [limit, offset],
  );
  if (!withTotal) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total from partners where deleted_at is null`);
  return { rows, total: count.rows[0]!.total };
}

export async function updatePartner(tx: Queryable, id: string, values: PartnerValues): Promise<PartnerRow | null> {
  const { columns, params } = columnValues(PARTNER_COLUMNS, values);
  const { rows } = await tx.query<PartnerRow>(
    `update partners set ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')}
      where id = $1 and deleted_at is null returning ${COLUMNS}`,
    [id, ...params],
  );
  return rows[0] ?? null;
}

export async function softDeletePartner(tx: Queryable, id: string, at: Date): Promise<PartnerRow | null> {
  const { rows } = await tx.query<PartnerRow>(
    `update partners set deleted_at = $2 where id = $1 and deleted_at is null returning ${COLUMNS}`,
    [id, at],
  );
  return rows[0] ?? null;
}
