// The agent credential (SPEC "Authentication" 2, API.md §6): `Authorization: Bearer <authToken>`
// on /agents/:id/…, where :id is the agentId. No device with that agent id → 404; a wrong token, or
// the token of a decommissioned device or of a deleted organization's → 401. Tokens are 256-bit
// random, stored as SHA-256 and compared in constant time. app.ts hands this authenticator to the
// auth plugin (http/auth.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/database.js';
import { readTenant, SYSTEM_SCOPE } from '../db/tenant-scope.js';
import { AppError, notFound } from '../errors.js';
import type { AgentAuthenticator } from '../http/auth.js';
import { findDeviceByAgentId } from './devices.repo.js';

const AGENT_ID = /^[0-9a-f]{64}$/;

export const hashAgentToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export function createAgentAuthenticator(deps: { db: Database }): AgentAuthenticator {
  return async (token, agentId) => {
    const device = AGENT_ID.test(agentId) ? await readTenant(deps.db, SYSTEM_SCOPE, (tx) => findDeviceByAgentId(tx, agentId)) : null;
    if (!device) throw notFound('Device');
    const given = Buffer.from(token === null ? '' : hashAgentToken(token), 'utf8');
    const stored = Buffer.from(device.auth_token_hash, 'utf8');
    const matches = given.length === stored.length && timingSafeEqual(given, stored);
    if (!matches || device.decommissioned_at !== null || device.org_deleted) {
      throw new AppError(
        'UNAUTHENTICATED',
        token === null ? 'Agent token required: send Authorization: Bearer <authToken>' : 'Agent token is invalid, or the device was decommissioned or its organization deleted',
      );
    }
    return {
      deviceId: device.id,
      agentId: device.agent_id,
      orgId: device.org_id,
      siteId: device.site_id,
      hostname: device.hostname,
      lastSourceIp: device.last_source_ip,
      tenant: { scope: 'organization', partnerId: device.partner_id, orgIds: [device.org_id] },
    };
  };
}
