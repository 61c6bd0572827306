// SQL for API keys. key_hash is written and matched here but never selected.
import type { Queryable } from '../db/database.js';

export type ApiKeyStatus = 'active' | 'expired' | 'revoked';

export interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  expires_at: Date | null;
  rate_limit: number;
  status: ApiKeyStatus;
  version: number;
  created_by: string | null;
  created_at: Date;
  last_used_at: Date | null;
  usage_count: number;
}

/** A key as authentication needs it, with its organization's and partner's standing. */
export type KeyAuthRow = Pick<ApiKeyRow, 'id' | 'org_id' | 'name' | 'key_prefix' | 'scopes' | 'expires_at' | 'rate_limit' | 'status' | 'version'> & {
  partner_id: string;
  org_status: string;
  org_deleted: boolean;
  partner_status: string;
};

/** Status as callers see it (`now` a parameter): an active key past its expiry is expired, used since or not. */
const effectiveStatus = (now: string) => `case when k.status = 'active' and k.expires_at <= ${now} then 'expired' else k.status end`;

const columns = (status = 'k.status') => `k.id, k.org_id, k.name, k.key_prefix, k.scopes, k.expires_at, k.rate_limit,
  ${status} as status, k.version, k.created_by, k.created_at, k.last_used_at, k.usage_count::float8 as usage_count`;
const COLUMNS = columns();

export async function findKeyForAuth(tx: Queryable, keyHash: string): Promise<KeyAuthRow | null> {
  const { rows } = await tx.query<KeyAuthRow>(
    `select k.id, k.org_id, k.name, k.key_prefix, k.scopes, k.expires_at, k.rate_limit, k.status, k.version,
            o.partner_id, o.status as org_status, o.deleted_at is not null as org_deleted,
            case when p.deleted_at is not null then 'deleted' else p.status end as partner_status
     from api_keys k join organizations o on o.id = k.org_id join partners p on p.id = o.partner_id
     where k.key_hash = $1`,
    [keyHash],
  );
  return rows[0] ?? null;
}

/** SPEC state table: an active key past expiresAt becomes expired on its next use. */
export async function markExpired(tx: Queryable, id: string): Promise<number | null> {
  const { rows } = await tx.query<{ version: number }>(
    `update api_keys set status = 'expired', version = version + 1 where id = $1 and status = 'active' returning version`,
    [id],
  );
  return rows[0]?.version ?? null;
}

export async function insertKey(
  tx: Queryable,
  values: { orgId: string; name: string; keyHash: string; keyPrefix: string; scopes: string[]; expiresAt: Date | null; rateLimit: number; createdBy: string | null },
): Promise<ApiKeyRow> {
  const { rows } = await tx.query<ApiKeyRow>(
    `insert into api_keys as k (org_id, name, key_hash, key_prefix, scopes, expires_at, rate_limit, created_by)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${COLUMNS}`,
    [values.orgId, values.name, values.keyHash, values.keyPrefix, values.scopes, values.expiresAt, values.rateLimit, values.createdBy],
  );
  return rows[0]!;
}

/** The key with its status as of `now`; `forUpdate` locks it for a change. */
export async function findKey(tx: Queryable, id: string, now: Date, forUpdate = false): Promise<ApiKeyRow | null> {
  const { rows } = await tx.query<ApiKeyRow>(
    `select ${columns(effectiveStatus('$2'))} from api_keys k where k.id = $1${forUpdate ? ' for update' : ''}`,
    [id, now],
  );
  return rows[0] ?? null;
}

export async function listKeys(
  tx: Queryable,
  filter: { orgIds: readonly string[] | null; status?: ApiKeyStatus; now: Date },
  limit: number,
  offset: number,
  withTotal: boolean,
): Promise<{ rows: ApiKeyRow[]; total: number | null }> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (filter.orgIds) {
    params.push(filter.orgIds);
    where.push(`k.org_id in (select unnest($${params.length}::uuid[]))`);
  }
  if (filter.status) {
    params.push(filter.now, filter.status);
    where.push(`${effectiveStatus(`$${params.length - 1}::timestamptz`)} = $${params.length}`);
  }
  const from = `from api_keys k${where.length ? ` where ${where.join(' and ')}` : ''}`;
  const n = params.length;
  const { rows } = await tx.query<ApiKeyRow>(
    `select ${columns(effectiveStatus(`$${n + 1}::timestamptz`))} ${from}
     order by k.created_at desc, k.id desc limit $${n + 2} offset $${n + 3}`,
    [...params, filter.now, limit, offset],
  );
  if (!withTotal) return { rows, total: null };
  const count = await tx.query<{ total: number }>(`select count(*)::int as total ${from}`, params);
  return { rows, total: count.rows[0]!.total };
}

export async function updateKey(tx: Queryable, id: string, values: { name?: string; scopes?: string[]; rateLimit?: number }): Promise<ApiKeyRow> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [field, column] of [['name', 'name'], ['scopes', 'scopes'], ['rateLimit', 'rate_limit']] as const) {
    if (values[field] === undefined) continue;
    params.push(values[field]);
    sets.push(`${column} = $${params.length}`);
  }
  const { rows } = await tx.query<ApiKeyRow>(
    `update api_keys as k set ${sets.join(', ')}, version = version + 1 where k.id = $1 returning ${COLUMNS}`,
    params,
  );
  return rows[0]!;
}

/** New material; usage starts again. */
export async function rotateKey(tx: Queryable, id: string, keyHash: string, keyPrefix: string): Promise<ApiKeyRow> {
  const { rows } = await tx.query<ApiKeyRow>(
    `update api_keys as k set key_hash = $2, key_prefix = $3, usage_count = 0, last_used_at = null, version = version + 1
     where k.id = $1 returning ${COLUMNS}`,
    [id, keyHash, keyPrefix],
  );
  return rows[0]!;
}

export async function revokeKey(tx: Queryable, id: string): Promise<ApiKeyRow> {
  const { rows } = await tx.query<ApiKeyRow>(
    `update api_keys as k set status = 'revoked', version = version + 1 where k.id = $1 returning ${COLUMNS}`,
    [id],
  );
  return rows[0]!;
}

/** Adds counted usage; counts for a hash that is no longer the key's (rotated) are dropped. */
export async function addUsage(tx: Queryable, usage: { hash: string; count: number; lastUsedAt: Date }[]): Promise<void> {
  await tx.query(
    `update api_keys k set usage_count = k.usage_count + u.n,
            last_used_at = greatest(k.last_used_at, u.at)
     from unnest($1::text[], $2::int[], $3::timestamptz[]) as u(hash, n, at)
     where k.key_hash = u.hash`,
    [usage.map((u) => u.hash), usage.map((u) => u.count), usage.map((u) => u.lastUsedAt)],
  );
}
