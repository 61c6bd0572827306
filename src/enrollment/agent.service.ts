// Agent enrollment and heartbeat (API.md §6). Enrollment locks the key's row, so concurrent
// enrollments with one key take turns and maxUsage N admits exactly N; usage, cap checks, the
// device and its audit entry commit together.
import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { AppError } from '../errors.js';
import type { RecordAudit } from '../audit/recorder.js';
import type { AgentDevice } from './agent-auth.js';
import { hashAgentToken } from './agent-auth.js';
import * as devices from './devices.repo.js';
import * as keys from './enrollment-keys.repo.js';
import { organizationIsLive, siteInOrganization } from '../db/tenant-lookups.js';
import { hashEnrollmentKey, keyStatus } from './enrollment-keys.service.js';
import type { EnrollBody, HeartbeatBody } from './enrollment.schemas.js';

const ENROLLMENT_KEY = /^[0-9a-f]{64}$/;
const mismatch = (what: string) => new AppError('ENROLLMENT_KEY_ORG_MISMATCH', `The ${what} given does not match the enrollment key`);

/** SPEC "Limits": partner and organization maxDevices; the rows are locked so a cap is never overshot. */
async function assertDeviceCaps(tx: Transaction, orgId: string): Promise<void> {
  const { rows } = await tx.query<{ org_cap: number | null; partner_cap: number | null; partner_id: string }>(
    `select o.max_devices as org_cap, p.max_devices as partner_cap, p.id as partner_id
     from organizations o join partners p on p.id = o.partner_id where o.id = $1 for update of o, p`,
    [orgId],
  );
  const caps = rows[0]!;
  if (caps.org_cap !== null) {
    const n = await tx.query<{ n: number }>(`select count(*)::int as n from devices where org_id = $1 and decommissioned_at is null`, [orgId]);
    if (n.rows[0]!.n >= caps.org_cap) throw new AppError('LIMIT_REACHED', `This organization has reached its limit of ${caps.org_cap} devices`);
  }
  if (caps.partner_cap !== null) {
    const n = await tx.query<{ n: number }>(
      `select count(*)::int as n from devices d join organizations o on o.id = d.org_id where o.partner_id = $1 and d.decommissioned_at is null`,
      [caps.partner_id],
    );
    if (n.rows[0]!.n >= caps.partner_cap) throw new AppError('LIMIT_REACHED', `This partner has reached its limit of ${caps.partner_cap} devices`);
  }
}

/** API.md §6: the key's site; else a site given by the agent (of the key's organization); else the oldest; else a new "Default". */
async function placeDevice(tx: Transaction, key: keys.EnrollmentKeyRow, siteId: string | undefined, sitesChanged: () => void): Promise<string> {
  if (key.site_id !== null) {
    if (siteId !== undefined && siteId !== key.site_id) throw mismatch('siteId');
    return key.site_id;
  }
  if (siteId !== undefined) {
    if (!(await siteInOrganization(tx, siteId, key.org_id))) throw mismatch('siteId');
    return siteId;
  }
  const oldest = await tx.query<{ id: string }>(`select id from sites where org_id = $1 order by created_at, id limit 1`, [key.org_id]);
  if (oldest.rows[0]) return oldest.rows[0].id;
  const created = await tx.query<{ id: string }>(`insert into sites (org_id, name) values ($1, 'Default') returning id`, [key.org_id]);
  tx.afterCommit(sitesChanged);
  return created.rows[0]!.id;
}

/** `sitesChanged`: tells the site lists that enrollment created a "Default" site. */
export function createAgentService(deps: { db: Database; recordAudit: RecordAudit; pepper: string; now: () => number; sitesChanged: () => void }) {
  const { db, recordAudit } = deps;

  return {
    async enroll(body: Static<typeof EnrollBody>, sourceIp: string | null, userAgent: string | null) {
      const invalid = new AppError('ENROLLMENT_KEY_INVALID', 'Enrollment key is not valid');
      if (!ENROLLMENT_KEY.test(body.enrollmentKey)) throw invalid;
      const keyHash = hashEnrollmentKey(deps.pepper, body.enrollmentKey);
      return withTenant(db, SYSTEM_SCOPE, async (tx) => {
        const key = await keys.lockKeyByHash(tx, keyHash);
        if (!key) throw invalid;
        const status = keyStatus(key, deps.now());
        if (status === 'expired') throw new AppError('ENROLLMENT_KEY_EXPIRED', 'Enrollment key has expired');
        if (status === 'exhausted') throw new AppError('ENROLLMENT_KEY_EXHAUSTED', 'Enrollment key has been used up');
        if (body.orgId !== undefined && body.orgId !== key.org_id) throw mismatch('orgId');
        if (!(await organizationIsLive(tx, key.org_id))) throw invalid;
        const siteId = await placeDevice(tx, key, body.siteId, deps.sitesChanged);
        await assertDeviceCaps(tx, key.org_id);
        const agentId = randomBytes(32).toString('hex');
        const authToken = randomBytes(32).toString('base64url');
        const device = await devices.insertDevice(tx, {
          orgId: key.org_id,
          siteId,
          agentId,
          authTokenHash: hashAgentToken(authToken),
          hostname: body.hostname,
          osType: body.osType,
          osVersion: body.osVersion,
          architecture: body.architecture,
          agentVersion: body.agentVersion,
          sourceIp,
        }, new Date(deps.now()));
        await keys.countUse(tx, key.id);
        await recordAudit(tx, {
          orgId: key.org_id,
          actor: { type: 'system', id: null },
          action: 'device.create',
          resource: { type: 'device', id: device.id, name: device.hostname },
          details: { enrollmentKeyId: key.id, enrollmentKeyName: key.name, agentId, siteId, osType: body.osType, agentVersion: body.agentVersion },
          ip: sourceIp,
          userAgent,
        });
        return { agentId, deviceId: device.id, authToken, orgId: key.org_id, siteId };
      });
    },

    /** Marks the device seen; a changed source address is audited (SPEC event agent.source.ip.changed). */
    async heartbeat(agent: AgentDevice, body: Static<typeof HeartbeatBody> | undefined, sourceIp: string | null, userAgent: string | null) {
      const at = new Date(deps.now());
      await withTenant(db, agent.tenant, async (tx) => {
        await devices.recordHeartbeat(tx, agent.deviceId, { at, sourceIp, agentVersion: body?.agentVersion });
        if (sourceIp !== null && agent.lastSourceIp !== null && sourceIp !== agent.lastSourceIp) {
          await recordAudit(tx, {
            orgId: agent.orgId,
            actor: { type: 'agent', id: agent.agentId },
            action: 'agent.source.ip.changed',
            resource: { type: 'device', id: agent.deviceId, name: agent.hostname },
            details: { previousIp: agent.lastSourceIp, newIp: sourceIp },
            ip: sourceIp,
            userAgent,
          });
        }
      });
      return { ok: true as const, serverTime: at.toISOString(), heartbeatIntervalSeconds: devices.HEARTBEAT_INTERVAL_S };
    },
  };
}

export type AgentService = ReturnType<typeof createAgentService>;
