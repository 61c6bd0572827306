// SQL for enrollment keys. key_hash is matched on enrollment only and never returned.
import type { Queryable } from '../db/database.js';
import { queryPage } from '../db/pages.js';
import { liveOrgOf } from '../db/tenant-lookups.js';

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

/**
 * Inserts the key if its organization is live and its site (when given) is one of that
 * organization's, as far as the scope can see; null otherwise, so the checks cost no statement of
 * their own (the caller finds out which one failed on that path only).
 */
export async function insertKey(
  tx: Queryable,
  values: { orgId: string; siteId: string | null; name: string; keyHash: string; maxUsage: number; expiresAt: Date; createdBy: string | null },
): Promise<EnrollmentKeyRow | null> {
  const { rows } = await tx.query<EnrollmentKeyRow>(
    `insert into enrollment_keys as k (org_id, site_id, name, key_hash, max_usage, expires_at, created_by)
     select o.id, $2::uuid, $3, $4, $5, $6, $7 from organizations o
      where o.id = $1 and o.deleted_at is null
        and ($2::uuid is null or exists (select 1 from sites s where s.id = $2::uuid and s.org_id = o.id))
     returning ${COLUMNS}`,
    [values.orgId, values.siteId, values.name, values.keyHash, values.maxUsage, values.expiresAt, values.createdBy],
  );
  return rows[0] ?? null;
}

export async function findKey(tx: Queryable, id: string): Promise<EnrollmentKeyRow | null> {
  const { rows } = await tx.query<EnrollmentKeyRow>(`select ${COLUMNS} from enrollment_keys k where k.id = $1 and ${liveOrgOf('k.org_id')}`, [id]);
  return rows[0] ?? null;
}

/**
 * Counts one use of the key an enrollment presents, if it is usable as of `now` (not expired, not
 * used up). The row lock makes concurrent enrollments with one key take turns, each seeing the
 * count the one before left. Null when no usable key has that hash.
 */
export async function useKeyByHash(tx: Queryable, keyHash: string, now: Date): Promise<EnrollmentKeyRow | null> {
  const { rows } = await tx.query<EnrollmentKeyRow>(
    `update enrollment_keys k set usage_count = k.usage_count + 1
      where k.key_hash = $1 and k.expires_at > $2 and (k.max_usage is null or k.usage_count < k.max_usage)
      returning ${COLUMNS}`,
    [keyHash, now],
  );
  return rows[0] ?? null;
}

/** The key with that hash, usable or not: why useKeyByHash refused it. */
export async function findKeyByHash(tx: Queryable, keyHash: string): Promise<EnrollmentKeyRow | null> {
  const { rows } = await tx.query<EnrollmentKeyRow>(`select ${COLUMNS} from enrollment_keys k where k.key_hash = $1`, [keyHash]);
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
  const where: string[] = [liveOrgOf('k.org_id')];
  if (filter.orgIds) {
    params.push(filter.orgIds);
    where.push(`k.org_id in (select unnest($${params.length}::uuid[]))`);
  }
  if (filter.expired !== undefined) {
    params.push(filter.now);
    where.push(`k.expires_at ${filter.expired ? '<=' : '>'} $${params.length}`);
  }
  const from = `from enrollment_keys k where ${where.join(' and ')}`;
  return queryPage<EnrollmentKeyRow>(tx, {
    rows: `select ${COLUMNS} ${from} order by k.created_at desc, k.id desc limit $${params.length + 1} offset $${params.length + 2}`,
    count: withTotal ? `select count(*)::int ${from}` : null,
    params: [...params, limit, offset],
  });
}

/**
 * New material in one statement, returning the key as it was and as it is: the old row is read
 * locked, so "before" is the latest committed version. maxUsage (null: unlimited) and expiresAt
 * are kept unless given (`maxUsage` undefined: kept). Null when the scope sees no such key.
 */
export async function rotateKey(
  tx: Queryable,
  id: string,
  values: { keyHash: string; maxUsage: number | null | undefined; expiresAt: Date | undefined },
): Promise<{ before: Pick<EnrollmentKeyRow, 'usage_count' | 'max_usage' | 'expires_at'>; after: EnrollmentKeyRow } | null> {
  const { rows } = await tx.query<EnrollmentKeyRow & { before_usage_count: number; before_max_usage: number | null; before_expires_at: Date }>(
    `update enrollment_keys k
        set key_hash = $2, usage_count = 0,
            max_usage = case when $3::boolean then $4::int else b.max_usage end,
            expires_at = coalesce($5::timestamptz, b.expires_at)
       from (select id, usage_count, max_usage, expires_at from enrollment_keys where id = $1 for update) b
      where k.id = b.id and ${liveOrgOf('k.org_id')}
      returning ${COLUMNS}, b.usage_count as before_usage_count, b.max_usage as before_max_usage, b.expires_at as before_expires_at`,
    [id, values.keyHash, values.maxUsage !== undefined, values.maxUsage ?? null, values.expiresAt ?? null],
  );
  const row = rows[0];
  if (!row) return null;
  const { before_usage_count, before_max_usage, before_expires_at, ...after } = row;
  return { before: { usage_count: before_usage_count, max_usage: before_max_usage, expires_at: before_expires_at }, after };
}

/** Deletes the key and returns it; null when the scope sees no such key. */
export async function deleteKey(tx: Queryable, id: string): Promise<EnrollmentKeyRow | null> {
  const { rows } = await tx.query<EnrollmentKeyRow>(`delete from enrollment_keys k where k.id = $1 and ${liveOrgOf('k.org_id')} returning ${COLUMNS}`, [id]);
  return rows[0] ?? null;
}
