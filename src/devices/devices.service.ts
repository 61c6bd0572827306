// Devices (API.md §6): list, get, move between sites of its organization, decommission; the
// agent's heartbeat. Reached with a JWT (devices permissions) or an API key (devices:read /
// devices:write); a device of an organization outside the caller's reach is 404, like one that
// does not exist. `deviceInReach` is the reach rule other modules (logs, live queries) apply.
import type { Static } from 'typebox';
import type { Database, Queryable } from '../db/database.js';
import { SYSTEM_SCOPE, readTenant, withTenant } from '../db/tenant-scope.js';
import { notFound, siteOutsideOrg } from '../errors.js';
import type { AgentCaller, Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import type { AuditAction } from '../audit/actions.js';
import { callerEvent, type RecordAudit } from '../audit/recorder.js';
import * as devices from './devices.repo.js';
import { siteInOrganization } from '../db/tenant-lookups.js';
import type { HeartbeatBody } from './devices.schemas.js';

export interface DeviceView {
  id: string;
  orgId: string;
  siteId: string;
  agentId: string;
  hostname: string;
  osType: 'windows' | 'macos' | 'linux';
  osVersion: string;
  architecture: string;
  agentVersion: string;
  status: 'online' | 'offline';
  lastSeenAt: string | null;
  lastSourceIp: string | null;
  enrolledAt: string;
  createdAt: string;
  updatedAt: string;
}

export function deviceView(row: devices.DeviceRow): DeviceView {
  return {
    id: row.id,
    orgId: row.org_id,
    siteId: row.site_id,
    agentId: row.agent_id,
    hostname: row.hostname,
    osType: row.os_type,
    osVersion: row.os_version,
    architecture: row.architecture,
    agentVersion: row.agent_version,
    status: row.status,
    lastSeenAt: row.last_seen_at?.toISOString() ?? null,
    lastSourceIp: row.last_source_ip,
    enrolledAt: row.enrolled_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function createDevicesService(deps: {
  db: Database;
  recordAudit: RecordAudit;
  now: () => number;
  /** After a decommission commits: the agent's open socket must close too (its token no longer works). */
  onDecommissioned?: (deviceId: string) => void;
}) {
  const { db, recordAudit } = deps;
  const event = (caller: Caller, meta: RequestMeta, action: AuditAction, row: devices.DeviceRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.org_id, action, resource: { type: 'device', id: row.id, name: row.hostname }, details });

  /**
   * A live device the caller may reach, else 404 (every /devices/:id route, and the logs and live
   * queries of a device). Runs in the caller's own transaction: row-level security already hides
   * other tenants' devices, and an out-of-reach device is 404 like a missing one, so no lookup in
   * system scope is needed.
   */
  async function deviceInReach(tx: Queryable, caller: Caller, id: string): Promise<{ id: string; orgId: string }> {
    const location = await devices.locateDevice(tx, id);
    if (!location || !caller.canAccessOrg(location.org_id)) throw notFound('Device');
    return { id, orgId: location.org_id };
  }

  const seenAt = new Map<string, number>();

  return {
    deviceInReach,

    /** An open agent socket counts as a heartbeat; written at most every 30 s per device. */
    async markSeen(deviceId: string): Promise<void> {
      const now = deps.now();
      if (now - (seenAt.get(deviceId) ?? 0) < 30_000) return;
      seenAt.set(deviceId, now);
      if (seenAt.size > 100_000) seenAt.clear();
      await withTenant(db, SYSTEM_SCOPE, (tx) => devices.markSeen(tx, deviceId, new Date(now)));
    },

    /** Marks the device seen; a changed source address is audited (SPEC event agent.source.ip.changed). */
    async heartbeat(agent: AgentCaller, body: Static<typeof HeartbeatBody> | undefined, meta: RequestMeta) {
      const at = new Date(deps.now());
      await withTenant(db, agent.tenant, async (tx) => {
        devices.recordHeartbeat(tx, agent.deviceId, { at, sourceIp: meta.ip, agentVersion: body?.agentVersion });
        if (meta.ip !== null && agent.lastSourceIp !== null && meta.ip !== agent.lastSourceIp) {
          await recordAudit(tx, {
            orgId: agent.orgId,
            actor: { type: 'agent', id: agent.agentId },
            action: 'agent.source.ip.changed',
            resource: { type: 'device', id: agent.deviceId, name: agent.hostname },
            details: { previousIp: agent.lastSourceIp, newIp: meta.ip },
            ip: meta.ip,
            userAgent: meta.userAgent,
          });
        }
      });
      return { ok: true as const, serverTime: at.toISOString(), heartbeatIntervalSeconds: devices.HEARTBEAT_INTERVAL_S };
    },

    async list(caller: Caller, query: { page?: number; limit?: number; orgId?: string; siteId?: string; status?: 'online' | 'offline'; search?: string }): Promise<PaginatedResult<DeviceView>> {
      const page = pageOf(query);
      const orgIds = query.orgId ? (caller.canAccessOrg(query.orgId) ? [query.orgId] : []) : caller.accessibleOrgIds;
      if (orgIds?.length === 0) return paginated([], page, 0);
      const { rows, total } = await readTenant(db, caller.tenant, (tx) =>
        devices.listDevices(tx, { orgIds, liveOrgsOnly: caller.scope === 'system', siteId: query.siteId, status: query.status, search: query.search, now: new Date(deps.now()) }, page.limit, page.offset, page.withTotal),
      );
      return paginated(rows.map(deviceView), page, total);
    },

    async get(caller: Caller, id: string): Promise<DeviceView> {
      const row = await readTenant(db, caller.tenant, (tx) => devices.findDevice(tx, id, new Date(deps.now())));
      if (!row || !caller.canAccessOrg(row.org_id)) throw notFound('Device');
      return deviceView(row);
    },

    async move(caller: Caller, id: string, siteId: string, meta: RequestMeta): Promise<DeviceView> {
      return withTenant(db, caller.tenant, async (tx) => {
        const now = new Date(deps.now());
        const current = await devices.findDevice(tx, id, now, true);
        if (!current || !caller.canAccessOrg(current.org_id)) throw notFound('Device');
        if (!(await siteInOrganization(tx, siteId, current.org_id))) {
          throw siteOutsideOrg('device');
        }
        const row = await devices.moveDevice(tx, id, siteId, now);
        await recordAudit(tx, event(caller, meta, 'device.update', row, { changedFields: ['siteId'], before: { siteId: current.site_id }, after: { siteId } }));
        return deviceView(row);
      });
    },

    async decommission(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
      await withTenant(db, caller.tenant, async (tx) => {
        const now = new Date(deps.now());
        const row = await devices.findDevice(tx, id, now, true);
        if (!row || !caller.canAccessOrg(row.org_id)) throw notFound('Device');
        await devices.decommissionDevice(tx, id, now);
        if (deps.onDecommissioned) tx.afterCommit(() => deps.onDecommissioned!(id));
        await recordAudit(tx, event(caller, meta, 'device.delete', row, { agentId: row.agent_id, siteId: row.site_id, hostname: row.hostname }));
      });
      return { success: true };
    },
  };
}

export type DevicesService = ReturnType<typeof createDevicesService>;
