// SQL for devices. auth_token_hash is matched by agent authentication only and never returned.
import type { Queryable, Transaction } from '../db/database.js';
import { substringPattern } from '../db/like.js';
import { queryPage } from '../db/pages.js';
import { liveOrgOf } from '../db/tenant-lookups.js';

/** Agents heartbeat every 60 s; a device is offline after three missed heartbeats. */
export const HEARTBEAT_INTERVAL_S = 60;
export const OFFLINE_AFTER_S = 3 * HEARTBEAT_INTERVAL_S;

export interface DeviceRow {
  id: string;
  org_id: string;
  site_id: string;
  agent_id: string;
  hostname: string;
  os_type: 'windows' | 'macos' | 'linux';
  os_version: string;
  architecture: string;
  agent_version: string;
  status: 'online' | 'offline';
  last_seen_at: Date | null;
  last_source_ip: string | null;
  enrolled_at: Date;
  created_at: Date;
  updated_at: Date;
}

export interface AgentDeviceRow {
  id: string;
  agent_id: string;
  org_id: string;
  site_id: string;
  partner_id: string;
  hostname: string;
  auth_token_hash: string;
  last_source_ip: string | null;
  decommissioned_at: Date | null;
  /** The device's organization was deleted: its agent is refused like a decommissioned one's. */
  org_deleted: boolean;
}

/** Status as of `now` (a parameter): online while heartbeats keep coming. */
const status = (now: string) => `case when d.last_seen_at > ${now}::timestamptz - interval '${OFFLINE_AFTER_S} seconds' then 'online' else 'offline' end`;
const columns = (now: string) => `d.id, d.org_id, d.site_id, d.agent_id, d.hostname, d.os_type, d.os_version, d.architecture, d.agent_version,
  ${status(now)} as status, d.last_seen_at, d.last_source_ip, d.enrolled_at, d.created_at, d.updated_at`;

export async function findDeviceByAgentId(tx: Queryable, agentId: string): Promise<AgentDeviceRow | null> {
  const { rows } = await tx.query<AgentDeviceRow>(
    `select d.id, d.agent_id, d.org_id, d.site_id, o.partner_id, d.hostname, d.auth_token_hash, d.last_source_ip, d.decommissioned_at,
            o.deleted_at is not null as org_deleted
     from devices d join organizations o on o.id = d.org_id where d.agent_id = $1`,
    [agentId],
  );
  return rows[0] ?? null;
}

export async function insertDevice(
  tx: Queryable,
  values: { orgId: string; siteId: string; agentId: string; authTokenHash: string; hostname: string; osType: string; osVersion: string; architecture: string; agentVersion: string; sourceIp: string | null },
  now: Date,
): Promise<DeviceRow> {
  const { rows } = await tx.query<DeviceRow>(
    `insert into devices as d (org_id, site_id, agent_id, auth_token_hash, hostname, os_type, os_version, architecture, agent_version, last_source_ip, enrolled_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) returning ${columns('$11')}`,
    [values.orgId, values.siteId, values.agentId, values.authTokenHash, values.hostname, values.osType, values.osVersion, values.architecture, values.agentVersion, values.sourceIp, now],
  );
  return rows[0]!;
}

/**
 * The organization's and its partner's device caps, their rows locked so concurrent enrolments take
 * turns. NO KEY UPDATE, not UPDATE: foreign-key checks (an audit row or a device naming the
 * organization) take KEY SHARE, which UPDATE would block, deadlocking with a decommission that
 * holds the device count and then writes its audit row.
 */
export async function lockDeviceCaps(tx: Queryable, orgId: string): Promise<{ orgCap: number | null; partnerCap: number | null; partnerId: string }> {
  const { rows } = await tx.query<{ org_cap: number | null; partner_cap: number | null; partner_id: string }>(
    `select o.max_devices as org_cap, p.max_devices as partner_cap, p.id as partner_id
     from organizations o join partners p on p.id = o.partner_id where o.id = $1 for no key update of o, p`,
    [orgId],
  );
  const caps = rows[0]!;
  return { orgCap: caps.org_cap, partnerCap: caps.partner_cap, partnerId: caps.partner_id };
}

/** Devices not decommissioned, of one organization or of every organization of a partner (the kept counts). */
export async function countLiveDevices(tx: Queryable, where: { orgId: string } | { partnerId: string }): Promise<number> {
  const { rows } = 'orgId' in where
    ? await tx.query<{ n: number }>(`select coalesce(sum(devices), 0)::int as n from organization_device_counts where org_id = $1`, [where.orgId])
    : await tx.query<{ n: number }>(
      `select coalesce(sum(c.devices), 0)::int as n from organization_device_counts c join organizations o on o.id = c.org_id where o.partner_id = $1 and o.deleted_at is null`,
      [where.partnerId],
    );
  return rows[0]!.n;
}

/** Devices of a deleted organization are gone with it (SPEC: it is excluded from every query). */
const LIVE_ORG = `join organizations o on o.id = d.org_id and o.deleted_at is null`;

export async function findDevice(tx: Queryable, id: string, now: Date, forUpdate = false): Promise<DeviceRow | null> {
  const { rows } = await tx.query<DeviceRow>(
    `select ${columns('$2')} from devices d ${LIVE_ORG} where d.id = $1 and d.decommissioned_at is null${forUpdate ? ' for update of d' : ''}`,
    [id, now],
  );
  return rows[0] ?? null;
}

/** Where a live device is, read in system scope: tells "no such device" from "not yours". */
export async function locateDevice(tx: Queryable, id: string): Promise<{ org_id: string } | null> {
  const { rows } = await tx.query<{ org_id: string }>(`select d.org_id from devices d ${LIVE_ORG} where d.id = $1 and d.decommissioned_at is null`, [id]);
  return rows[0] ?? null;
}

/**
 * A page of live devices, newest first. `search` is API.md §4's literal, case-insensitive substring
 * of the hostname. Under row-level security no trigram index can serve it (ILIKE is not leakproof, so
 * PostgreSQL applies it only after the policy, never as an index condition): a scoped caller's
 * search reads its organizations' devices through devices_org, a system-scope search reads them all.
 * It stays a prepared statement like the rest of the list: the generic plan takes devices_org per
 * organization, where a plan for the values (prepare: false) scanned every device for a partner.
 */
export async function listDevices(
  tx: Queryable,
  filter: {
    orgIds: readonly string[] | null;
    /**
     * Leave out devices of deleted organizations. Only a system-scope caller needs it: any other
     * caller's orgIds (its reach) hold live organizations only, and the hot list skips the join.
     */
    liveOrgsOnly: boolean;
    siteId?: string;
    status?: 'online' | 'offline';
    search?: string;
    now: Date;
  },
  limit: number,
  offset: number,
  withTotal = true,
): Promise<{ rows: DeviceRow[]; total: number | null }> {
  const params: unknown[] = [filter.now];
  const where = ['d.decommissioned_at is null'];
  if (filter.liveOrgsOnly) where.push(liveOrgOf('d.org_id'));
  if (filter.orgIds) {
    params.push(filter.orgIds);
    where.push(`d.org_id in (select unnest($${params.length}::uuid[]))`);
  }
  if (filter.siteId) {
    params.push(filter.siteId);
    where.push(`d.site_id = $${params.length}`);
  }
  if (filter.status) {
    params.push(filter.status);
    where.push(`${status('$1')} = $${params.length}`);
  }
  if (filter.search !== undefined) {
    params.push(substringPattern(filter.search));
    where.push(`d.hostname ilike $${params.length}`);
  }
  // $1 appears in the count too (through the status filter or this no-op), so both share params.
  const from = `from devices d where ${where.join(' and ')} and $1::timestamptz is not null`;
  // Without a site, status or search filter the total is the organizations' kept counts (migration 0011).
  const kept = filter.siteId === undefined && filter.status === undefined && filter.search === undefined;
  const liveCounts = filter.liveOrgsOnly ? ` and ${liveOrgOf('c.org_id')}` : '';
  const count = !withTotal
    ? null
    : !kept
      ? `select count(*)::int ${from}`
      : filter.orgIds
        ? `select coalesce(sum(c.devices), 0)::int from organization_device_counts c where c.org_id in (select unnest($2::uuid[])) and $1::timestamptz is not null${liveCounts}`
        : `select coalesce(sum(c.devices), 0)::int from organization_device_counts c where $1::timestamptz is not null${liveCounts}`;
  return queryPage<DeviceRow>(tx, {
    rows: `select ${columns('$1')} ${from} order by d.created_at desc, d.id desc limit $${params.length + 1} offset $${params.length + 2}`,
    count,
    params: [...params, limit, offset],
  });
}

export async function moveDevice(tx: Queryable, id: string, siteId: string, now: Date): Promise<DeviceRow> {
  const { rows } = await tx.query<DeviceRow>(`update devices d set site_id = $2 where d.id = $1 returning ${columns('$3')}`, [id, siteId, now]);
  return rows[0]!;
}

export async function decommissionDevice(tx: Queryable, id: string, now: Date): Promise<void> {
  await tx.query(`update devices set decommissioned_at = $2 where id = $1`, [id, now]);
}

/**
 * A heartbeat: seen now, from this address, running this agent version. Queued (queryLater): it
 * goes out with the COMMIT, so a heartbeat's transaction is one round trip.
 */
export function recordHeartbeat(tx: Transaction, id: string, values: { at: Date; sourceIp: string | null; agentVersion?: string }): void {
  tx.queryLater(
    `update devices set last_seen_at = $2, last_source_ip = coalesce($3, last_source_ip), agent_version = coalesce($4, agent_version) where id = $1`,
    [id, values.at, values.sourceIp, values.agentVersion ?? null],
  );
}

/** A connected agent is seen: keeps the device online while its socket is open. */
export async function markSeen(tx: Queryable, id: string, at: Date): Promise<void> {
  await tx.query(`update devices set last_seen_at = greatest(last_seen_at, $2) where id = $1 and decommissioned_at is null`, [id, at]);
}
