// Agent enrolment (API.md §6): the enrollment key is redeemed (locked, checked, counted), the device
// placed and checked against the device caps, and the device with its audit entry written, all in
// one transaction.
import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { organizationIsLive, siteInOrganization } from '../db/tenant-lookups.js';
import { AppError, enrollmentKeyInvalid, limitReached } from '../errors.js';
import type { RequestMeta } from '../http/request-meta.js';
import type { RecordAudit } from '../audit/recorder.js';
import type { RedeemedKey } from '../enrollment-keys/enrollment-keys.service.js';
import { hashAgentToken } from './agent-credential.js';
import * as devices from './devices.repo.js';
import type { EnrollBody } from './devices.schemas.js';

const mismatch = (what: string) => new AppError('ENROLLMENT_KEY_ORG_MISMATCH', `The ${what} given does not match the enrollment key`);

export interface EnrollmentDeps {
  db: Database;
  recordAudit: RecordAudit;
  now: () => number;
  enrollmentKeys: { redeem(tx: Transaction, presented: string): Promise<RedeemedKey> };
  sites: { siteForNewDevice(tx: Transaction, orgId: string): Promise<string> };
}

/** SPEC "Limits": partner and organization maxDevices; the rows are locked so a cap is never overshot. */
async function assertDeviceCaps(tx: Transaction, orgId: string): Promise<void> {
  const caps = await devices.lockDeviceCaps(tx, orgId);
  if (caps.orgCap !== null && (await devices.countLiveDevices(tx, { orgId })) >= caps.orgCap) {
    throw limitReached('organization', caps.orgCap, 'devices');
  }
  if (caps.partnerCap !== null && (await devices.countLiveDevices(tx, { partnerId: caps.partnerId })) >= caps.partnerCap) {
    throw limitReached('partner', caps.partnerCap, 'devices');
  }
}

export function createEnrollmentService(deps: EnrollmentDeps) {
  /** API.md §6: the key's site; else a site given by the agent (of the key's organization); else the oldest; else a new "Default". */
  async function placeDevice(tx: Transaction, key: RedeemedKey, siteId: string | undefined): Promise<string> {
    if (key.siteId !== null) {
      if (siteId !== undefined && siteId !== key.siteId) throw mismatch('siteId');
      return key.siteId;
    }
    if (siteId !== undefined) {
      if (!(await siteInOrganization(tx, siteId, key.orgId))) throw mismatch('siteId');
      return siteId;
    }
    return deps.sites.siteForNewDevice(tx, key.orgId);
  }

  return {
    async enroll(body: Static<typeof EnrollBody>, meta: RequestMeta) {
      return withTenant(deps.db, SYSTEM_SCOPE, async (tx) => {
        const key = await deps.enrollmentKeys.redeem(tx, body.enrollmentKey);
        if (body.orgId !== undefined && body.orgId !== key.orgId) throw mismatch('orgId');
        if (!(await organizationIsLive(tx, key.orgId))) throw enrollmentKeyInvalid();
        const siteId = await placeDevice(tx, key, body.siteId);
        await assertDeviceCaps(tx, key.orgId);
        const agentId = randomBytes(32).toString('hex');
        const authToken = randomBytes(32).toString('base64url');
        const device = await devices.insertDevice(tx, {
          orgId: key.orgId,
          siteId,
          agentId,
          authTokenHash: hashAgentToken(authToken),
          hostname: body.hostname,
          osType: body.osType,
          osVersion: body.osVersion,
          architecture: body.architecture,
          agentVersion: body.agentVersion,
          sourceIp: meta.ip,
        }, new Date(deps.now()));
        await deps.recordAudit(tx, {
          orgId: key.orgId,
          actor: { type: 'system', id: null },
          action: 'device.create',
          resource: { type: 'device', id: device.id, name: device.hostname },
          details: { enrollmentKeyId: key.id, enrollmentKeyName: key.name, agentId, siteId, osType: body.osType, agentVersion: body.agentVersion },
          ip: meta.ip,
          userAgent: meta.userAgent,
        });
        return { agentId, deviceId: device.id, authToken, orgId: key.orgId, siteId };
      });
    },
  };
}

export type EnrollmentService = ReturnType<typeof createEnrollmentService>;
