// Enrollment keys (SPEC "Enrollment key", its endpoint table, "Authentication" 12-13; API.md §5).
// The key is 32 random bytes as 64 hex characters, stored as HMAC-SHA-256 under the server pepper,
// so a changed pepper makes every existing key unknown (401), never a 500.
import { createHmac, randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { Database, Transaction } from '../db/database.js';
import { readTenant, withTenant } from '../db/tenant-scope.js';
import { AppError, enrollmentKeyInvalid, notFound, orgDenied, siteOutsideOrg } from '../errors.js';
import { assertOrganizationContext, type Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { futureExpiry } from '../http/validation.js';
import type { AuditAction } from '../audit/actions.js';
import { callerEvent, type RecordAudit } from '../audit/recorder.js';
import * as keys from './enrollment-keys.repo.js';
import { organizationIsLive, siteInOrganization } from '../db/tenant-lookups.js';
import type { CreateEnrollmentKeyBody, EnrollmentKey, RotateEnrollmentKeyBody } from './enrollment-keys.schemas.js';

export type EnrollmentKeyView = Static<typeof EnrollmentKey>;

const ENROLLMENT_KEY = /^[0-9a-f]{64}$/;

/** What enrolment learns of the key it redeemed. */
export interface RedeemedKey {
  id: string;
  name: string;
  orgId: string;
  siteId: string | null;
}

export function hashEnrollmentKey(pepper: string, key: string): string {
  return createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
}

function keyStatus(row: keys.EnrollmentKeyRow, now: number): EnrollmentKeyView['status'] {
  if (row.expires_at.getTime() <= now) return 'expired';
  if (row.max_usage !== null && row.usage_count >= row.max_usage) return 'exhausted';
  return 'active';
}

export function createEnrollmentKeysService(deps: { db: Database; recordAudit: RecordAudit; pepper: string; defaultTtlMinutes: number; now: () => number }) {
  const { db, recordAudit } = deps;
  const view = (row: keys.EnrollmentKeyRow): EnrollmentKeyView => ({
    id: row.id,
    orgId: row.org_id,
    siteId: row.site_id,
    name: row.name,
    usageCount: row.usage_count,
    maxUsage: row.max_usage,
    expiresAt: row.expires_at.toISOString(),
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    status: keyStatus(row, deps.now()),
  });
  const event = (caller: Caller, meta: RequestMeta, action: AuditAction, row: keys.EnrollmentKeyRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.org_id, action, resource: { type: 'enrollment_key', id: row.id, name: row.name }, details });
  const newKey = () => {
    const key = randomBytes(32).toString('hex');
    return { key, keyHash: hashEnrollmentKey(deps.pepper, key) };
  };

  /** SPEC "Authentication" 12: orgId inferred for organization scope, required otherwise. */
  function targetOrg(caller: Caller, orgId: string | undefined): string {
    assertOrganizationContext(caller);
    if (caller.scope === 'organization') {
      if (orgId !== undefined && orgId !== caller.orgId) throw orgDenied();
      return caller.orgId!;
    }
    if (orgId === undefined) {
      throw new AppError('VALIDATION_FAILED', `orgId is required for ${caller.scope} scope`, { errors: [{ path: 'body.orgId', message: 'required' }] });
    }
    if (!caller.canAccessOrg(orgId)) throw orgDenied();
    return orgId;
  }

  async function reachableKey(tx: Transaction, caller: Caller, id: string) {
    const row = await keys.findKey(tx, id);
    if (!row || !caller.canAccessOrg(row.org_id)) throw notFound('Enrollment key');
    return row;
  }

  return {
    /**
     * An enrolment's use of a key, in the enrolment's transaction: one statement counts the use of
     * a usable key, its row lock making concurrent enrolments take turns, so N of them with
     * maxUsage N succeed and the rest fail; unknown (or made under another pepper), expired and
     * used-up keys are refused.
     */
    async redeem(tx: Transaction, presented: string): Promise<RedeemedKey> {
      if (!ENROLLMENT_KEY.test(presented)) throw enrollmentKeyInvalid();
      const keyHash = hashEnrollmentKey(deps.pepper, presented);
      const key = await keys.useKeyByHash(tx, keyHash, new Date(deps.now()));
      if (!key) {
        // Refused: only now is the key read again, to say why.
        const refused = await keys.findKeyByHash(tx, keyHash);
        if (!refused) throw enrollmentKeyInvalid();
        if (keyStatus(refused, deps.now()) === 'expired') throw new AppError('ENROLLMENT_KEY_EXPIRED', 'Enrollment key has expired');
        throw new AppError('ENROLLMENT_KEY_EXHAUSTED', 'Enrollment key has been used up');
      }
      return { id: key.id, name: key.name, orgId: key.org_id, siteId: key.site_id };
    },

    async list(caller: Caller, query: { page?: number; limit?: number; orgId?: string; expired?: boolean }): Promise<PaginatedResult<EnrollmentKeyView>> {
      assertOrganizationContext(caller);
      const page = pageOf(query);
      const orgIds = query.orgId ? (caller.canAccessOrg(query.orgId) ? [query.orgId] : []) : caller.accessibleOrgIds;
      if (orgIds?.length === 0) return paginated([], page, 0);
      const { rows, total } = await readTenant(db, caller.tenant, (tx) =>
        keys.listKeys(tx, { orgIds, expired: query.expired, now: new Date(deps.now()) }, page.limit, page.offset, page.withTotal),
      );
      return paginated(rows.map(view), page, total);
    },

    async get(caller: Caller, id: string): Promise<EnrollmentKeyView> {
      assertOrganizationContext(caller);
      return readTenant(db, caller.tenant, async (tx) => view(await reachableKey(tx, caller, id)));
    },

    async create(caller: Caller, body: Static<typeof CreateEnrollmentKeyBody>, meta: RequestMeta): Promise<EnrollmentKeyView & { key: string }> {
      const orgId = targetOrg(caller, body.orgId);
      const now = deps.now();
      const expiresAt = futureExpiry(body.expiresAt, now) ?? new Date(now + deps.defaultTtlMinutes * 60_000);
      const material = newKey();
      return withTenant(db, caller.tenant, async (tx) => {
        const siteId = body.siteId ?? null;
        const row = await keys.insertKey(tx, { orgId, siteId, name: body.name, keyHash: material.keyHash, maxUsage: body.maxUsage ?? 1, expiresAt, createdBy: caller.userId });
        if (!row) {
          // API.md §2: a missing organization is 404 for system scope; others cannot tell it from one out of reach.
          if (!(await organizationIsLive(tx, orgId))) throw caller.scope === 'system' ? notFound('Organization') : orgDenied();
          throw siteOutsideOrg('key');
        }
        await recordAudit(tx, event(caller, meta, 'enrollment_key.create', row, { siteId, maxUsage: row.max_usage, expiresAt: row.expires_at.toISOString() }));
        return { ...view(row), key: material.key };
      });
    },

    async rotate(caller: Caller, id: string, body: Static<typeof RotateEnrollmentKeyBody> | undefined, meta: RequestMeta): Promise<EnrollmentKeyView & { key: string }> {
      assertOrganizationContext(caller);
      const expiresAt = futureExpiry(body?.expiresAt, deps.now());
      const material = newKey();
      return withTenant(db, caller.tenant, async (tx) => {
        const maxUsage = body && 'maxUsage' in body ? body.maxUsage : undefined;
        const rotated = await keys.rotateKey(tx, id, { keyHash: material.keyHash, maxUsage, expiresAt });
        // A key the caller does not reach is 404 (and the rotation rolls back).
        if (!rotated || !caller.canAccessOrg(rotated.after.org_id)) throw notFound('Enrollment key');
        const { before, after: row } = rotated;
        await recordAudit(tx, event(caller, meta, 'enrollment_key.rotate', row, {
          usageCountBefore: before.usage_count,
          before: { maxUsage: before.max_usage, expiresAt: before.expires_at.toISOString() },
          after: { maxUsage: row.max_usage, expiresAt: row.expires_at.toISOString() },
        }));
        return { ...view(row), key: material.key };
      });
    },

    async remove(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
      assertOrganizationContext(caller);
      await withTenant(db, caller.tenant, async (tx) => {
        const row = await keys.deleteKey(tx, id);
        if (!row || !caller.canAccessOrg(row.org_id)) throw notFound('Enrollment key'); // rolls the delete back
        await recordAudit(tx, event(caller, meta, 'enrollment_key.delete', row, { usageCount: row.usage_count, maxUsage: row.max_usage }));
      });
      return { success: true };
    },
  };
}

export type EnrollmentKeysService = ReturnType<typeof createEnrollmentKeysService>;
