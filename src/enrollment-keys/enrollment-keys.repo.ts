// SQL for enrollment keys. key_hash is matched on enrollment only and never returned.
import type { Queryable } from '../db/database.js';

export interface EnrollmentKeyRow {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  usage_count: number;
  max_usage: number | null;
  expires_at: Date;
  created_by: string | null;
  created_at: Date;
}

const COLUMNS = `k.id, k.org_id, k.site_id, k.name, k.usage_count, k.max_usage, k.expires_at, k.created_by, k.created_at`;

export async function insertKey(
  tx: Queryable,
  values: { orgId: string; siteId: string | null; name: string; keyHash: string; maxUsage: number; expiresAt: Date; createdBy: string | null },
): Promise<EnrollmentKeyRow> {
  const { rows } = await tx.query<EnrollmentKeyRow>(
    `insert into enrollment_keys as k (org_id, site_id, name, key_hash, max_usage, expires_at, created_by)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
    [values.orgId, values.siteId, values.name, values.keyHash, values.maxUsage, values.expiresAt, values.createdBy],
  );
  return rows[0]!;
}

export async function findKey(tx: Queryable, id: string, forUpdate = false): Promise<EnrollmentKeyRow | null> {
  const { rows } = await tx.query<EnrollmentKeyRow>(`select ${COLUMNS} from enrollment_keys k where k.id = $1${forUpdate ? ' for update' : ''}`, [id]);
  return rows[0] ?? null;
}

/** The key an enrollment presents, locked: concurrent enrollments with one key take turns. */
export async function lockKeyByHash(tx: Queryable, keyHash: string): Promise<EnrollmentKeyRow | null> {
  const { rows } = await tx.query<EnrollmentKeyRow>(`select ${COLUMNS} from enrollment_keys k where k.key_hash = $1 for update`, [keyHash]);
  return rows[0] ?? null;
}

export async function listKeys(
  tx: Queryable,
  filter: { orgIds: readonly string[] | null; expired?: boolean; now: Date },
  limit: number,
  offset: number,
  withTotal = true,
): Promise<{ rows: EnrollmentKeyRow[]; total: number | null }> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (filter.orgIds) {
    params.push(filter.orgIds);
    where.push(`k.org_id in (select unnest($${params.length}::uuid[]))`);
  }
  if (filter.expired !== undefined) {
    params.push(filter.now);
    where.push(`k.expires_at ${filter.expired ? '<=' : '>'} $${params.length}`);
  }
  const from = `from enrollment_keys k${where.length ? ` where ${where.join(' and ')}` : ''}`;
  const { rows } = await tx.query<EnrollmentKeyRow>(
    `select ${COLUMNS} ${from} order by k.created_at desc, k.id desc limit $${params.length + 1} offset $${params.length + 2}`,
    [...params, limit, offset],
  );
  if (!withTotal) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total ${from}`, params);
  return { rows, total: count.rows[0]!.total };
}

export async function rotateKey(tx: Queryable, id: string, values: { keyHash: string; maxUsage: number | null; expiresAt: Date }): Promise<EnrollmentKeyRow> {
  const { rows } = await tx.query<EnrollmentKeyRow>(
    `update enrollment_keys k set key_hash = $2, max_usage = $3, expires_at = $4, usage_count = 0 where k.id = $1 returning ${COLUMNS}`,
    [id, values.keyHash, values.maxUsage, values.expiresAt],
  );
  return rows[0]!;
}

export async function deleteKey(tx: Queryable, id: string): Promise<void> {
  await tx.query(`delete from enrollment_keys where id = $1`, [id]);
}

export async function countUse(tx: Queryable, id: string): Promise<void> {
  await tx.query(`update enrollment_keys set usage_count = usage_count + 1 where id = $1`, [id]);
}
