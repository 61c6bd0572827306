// SQL for API keys. key_hash is written and matched here but never selected.
import type { Queryable } from '../db/database.js';
import { queryPage } from '../db/pages.js';
import { liveOrgOf } from '../db/tenant-lookups.js';

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

/**
 * Inserts the key if its organization is live (as far as the scope can see); null otherwise, so the
 * existence check costs no statement of its own.
 */
export async function insertKey(
  tx: Queryable,
  values: { orgId: string; name: string; keyHash: string; keyPrefix: string; scopes: string[]; expiresAt: Date | null; rateLimit: number; createdBy: string | null },
): Promise<ApiKeyRow | null> {
  const { rows } = await tx.query<ApiKeyRow>(
    `insert into api_keys as k (org_id, name, key_hash, key_prefix, scopes, expires_at, rate_limit, created_by)
     select o.id, $2, $3, $4, $5, $6, $7, $8 from organizations o where o.id = $1 and o.deleted_at is null
     returning ${COLUMNS}`,
    [values.orgId, values.name, values.keyHash, values.keyPrefix, values.scopes, values.expiresAt, values.rateLimit, values.createdBy],
  );
  return rows[0] ?? null;
}

/** The key with its status as of `now`. */
export async function findKey(tx: Queryable, id: string, now: Date): Promise<ApiKeyRow | null> {
  const { rows } = await tx.query<ApiKeyRow>(
    `select ${columns(effectiveStatus('$2'))} from api_keys k where k.id = $1 and ${liveOrgOf('k.org_id')}`,
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
  const params: unknown[] = [filter.now]; // $1: the status's "now", in the page and in a status filter
  const where: string[] = [liveOrgOf('k.org_id')];
  if (filter.orgIds) {
    params.push(filter.orgIds);
    where.push(`k.org_id in (select unnest($${params.length}::uuid[]))`);
  }
  if (filter.status) {
    params.push(filter.status);
    where.push(`${effectiveStatus('$1::timestamptz')} = $${params.length}`);
  }
  const from = `from api_keys k where ${where.join(' and ')}`;
  const n = params.length;
  return queryPage<ApiKeyRow>(tx, {
    rows: `select ${columns(effectiveStatus('$1::timestamptz'))} ${from} order by k.created_at desc, k.id desc limit $${n + 1} offset $${n + 2}`,
    count: withTotal ? `select count(*)::int ${from}` : null,
    params: [...params, limit, offset],
  });
}

/** An active key (not past its expiry) as of `now`: the only keys update, rotate and revoke change. */
const active = (k: string, now: string) => `${k}.status = 'active' and (${k}.expires_at is null or ${k}.expires_at > ${now})`;

/**
 * Changes an active key in one statement and returns it as it was and as it is: the old row is read
 * locked, so "before" is the latest committed version. Null when the scope sees no such active key
 * (the caller tells a missing key from an inactive one with findKey, on that failure path only).
 */
async function changeActiveKey(tx: Queryable, id: string, now: Date, sets: string[], params: unknown[]): Promise<{ before: ApiKeyRow; after: ApiKeyRow } | null> {
  const { rows } = await tx.query<ApiKeyRow & { before: Pick<ApiKeyRow, 'name' | 'scopes' | 'rate_limit' | 'key_prefix' | 'usage_count'> & { last_used_at: string | null } }>(
    `update api_keys as k set ${sets.join(', ')}, version = k.version + 1
       from (select id, status, expires_at, name, scopes, rate_limit, key_prefix, usage_count, last_used_at from api_keys where id = $1 for update) b
      where k.id = b.id and ${active('b', '$2')} and ${liveOrgOf('k.org_id')}
      returning ${COLUMNS}, json_build_object('name', b.name, 'scopes', b.scopes, 'rate_limit', b.rate_limit, 'key_prefix', b.key_prefix,
        'usage_count', b.usage_count::float8, 'last_used_at', b.last_used_at) as before`,
    [id, now, ...params],
  );
  const row = rows[0];
  if (!row) return null;
  const { before, ...after } = row;
  return { before: { ...after, ...before, last_used_at: before.last_used_at === null ? null : new Date(before.last_used_at) }, after };
}

export function updateKey(tx: Queryable, id: string, now: Date, values: { name?: string; scopes?: string[]; rateLimit?: number }) {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [field, column] of [['name', 'name'], ['scopes', 'scopes'], ['rateLimit', 'rate_limit']] as const) {
    if (values[field] === undefined) continue;
    params.push(values[field]);
    sets.push(`${column} = $${params.length + 2}`);
  }
  return changeActiveKey(tx, id, now, sets, params);
}

/** New material; usage starts again. */
export function rotateKey(tx: Queryable, id: string, now: Date, keyHash: string, keyPrefix: string) {
  return changeActiveKey(tx, id, now, ['key_hash = $3', 'key_prefix = $4', 'usage_count = 0', 'last_used_at = null'], [keyHash, keyPrefix]);
}

/** Revokes an active key; revoking changes nothing the audit entry reads, so the new row serves as "before" too. */
export async function revokeKey(tx: Queryable, id: string, now: Date): Promise<ApiKeyRow | null> {
  const { rows } = await tx.query<ApiKeyRow>(
    `update api_keys as k set status = 'revoked', version = k.version + 1
      where k.id = $1 and ${active('k', '$2')} and ${liveOrgOf('k.org_id')} returning ${COLUMNS}`,
    [id, now],
  );
  return rows[0] ?? null;
}

/** Adds counted usage; counts for a hash that is no longer the key's (rotated) are dropped. */
/** This database's id, naming its keys in a Redis that other deployments may share. */
export async function deploymentId(tx: Queryable): Promise<string> {
  const { rows } = await tx.query<{ id: string }>('select id from deployment_identity');
  return rows[0]!.id;
}

/**
 * Adds a batch taken from the shared store unless its id was applied before (a retry after a crash),
 * and prunes ids old enough that no retry can come. One transaction: the id and the counts land together.
 */
export async function applyUsageBatch(tx: Queryable, batchId: string, usage: { hash: string; count: number; lastUsedAt: Date }[]): Promise<boolean> {
  const { rows } = await tx.query(
    `with pruned as (delete from api_key_usage_batches where id in (select id from api_key_usage_batches where applied_at < now() - interval '1 day' limit 100))
     insert into api_key_usage_batches (id) values ($1) on conflict do nothing returning id`,
    [batchId],
  );
  if (rows.length === 0) return false;
  if (usage.length > 0) await addUsage(tx, usage);
  return true;
}

export async function addUsage(tx: Queryable, usage: { hash: string; count: number; lastUsedAt: Date }[]): Promise<void> {
  await tx.query(
    `update api_keys k set usage_count = k.usage_count + u.n,
            last_used_at = greatest(k.last_used_at, u.at)
     from unnest($1::text[], $2::int[], $3::timestamptz[]) as u(hash, n, at)
     where k.key_hash = u.hash`,
    [usage.map((u) => u.hash), usage.map((u) => u.count), usage.map((u) => u.lastUsedAt)],
  );
}
