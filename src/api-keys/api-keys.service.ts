// API key management (SPEC "API key", its state table, "Authentication" 7 and 12; API.md §5).
// Keys of an organization outside the caller's reach are 404; a create naming one is 403.
import type { Static } from 'typebox';
import type { Database, Transaction } from '../db/database.js';
import { readTenant, withTenant } from '../db/tenant-scope.js';
import { AppError, notFound, orgDenied } from '../errors.js';
import { assertOrganizationContext, type Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { futureExpiry } from '../http/validation.js';
import { callerEvent, changeDetails, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import * as keys from './api-keys.repo.js';
import { generateKey } from './key-material.js';
import type { ApiKey, CreateApiKeyBody, UpdateApiKeyBody } from './api-keys.schemas.js';

export type ApiKeyView = Static<typeof ApiKey>;
export type ApiKeyWithSecretView = ApiKeyView & { key: string; warning: string };

const WARNING = 'Store this API key now: it is shown only once and cannot be retrieved again.';

export function createApiKeysService(deps: {
  db: Database;
  recordAudit: RecordAudit;
  keyChanged: (keyId: string, version: number) => Promise<void>;
  now: () => number;
}) {
  const { db, recordAudit } = deps;
  // Usage is what has been flushed (every second, API.md §5: "within a few seconds").
  const view = (row: keys.ApiKeyRow): ApiKeyView => ({
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    expiresAt: row.expires_at?.toISOString() ?? null,
    rateLimit: row.rate_limit,
    status: row.status,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    usageCount: row.usage_count,
  });
  const event = (caller: Caller, meta: RequestMeta, action: AuditAction, row: keys.ApiKeyRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.org_id, action, resource: { type: 'api_key', id: row.id, name: row.name }, details });

  /** A key of a reachable organization, or 404 (RLS hides the others too). */
  async function reachableKey(tx: Transaction, caller: Caller, id: string) {
    const row = await keys.findKey(tx, id, new Date(deps.now()));
    if (!row || !caller.canAccessOrg(row.org_id)) throw notFound('API key');
    return row;
  }

  /**
   * Runs a change that touches only an active key (one statement, null when it found none) in the
   * caller's transaction; then the failure path alone reads the key, to answer 404 or 409. A key
   * changed outside the caller's reach (RLS already hides those) is 404 and the change rolls back.
   */
  async function changeActiveKey<T extends { after: keys.ApiKeyRow }, R>(
    caller: Caller,
    id: string,
    change: (tx: Transaction, now: Date) => Promise<T | null>,
    finish: (tx: Transaction, changed: T) => Promise<R>,
    inactive: (status: keys.ApiKeyStatus) => string = (status) => `Only active keys can be changed; this key is ${status}`,
  ): Promise<R> {
    assertOrganizationContext(caller);
    const { row, result } = await withTenant(db, caller.tenant, async (tx) => {
      const changed = await change(tx, new Date(deps.now()));
      if (!changed) {
        const current = await reachableKey(tx, caller, id);
        throw new AppError('API_KEY_NOT_ACTIVE', inactive(current.status));
      }
      if (!caller.canAccessOrg(changed.after.org_id)) throw notFound('API key');
      return { row: changed.after, result: await finish(tx, changed) };
    });
    await deps.keyChanged(row.id, row.version);
    return result;
  }

  return {
    async list(caller: Caller, query: { page?: number; limit?: number; orgId?: string; status?: keys.ApiKeyStatus }): Promise<PaginatedResult<ApiKeyView>> {
      assertOrganizationContext(caller);
      const page = pageOf(query);
      const orgIds = query.orgId ? (caller.canAccessOrg(query.orgId) ? [query.orgId] : []) : caller.accessibleOrgIds;
      if (orgIds?.length === 0) return paginated([], page, 0);
      const { rows, total } = await readTenant(db, caller.tenant, (tx) =>
        keys.listKeys(tx, { orgIds, status: query.status, now: new Date(deps.now()) }, page.limit, page.offset, page.withTotal),
      );
      return paginated(rows.map(view), page, total);
    },

    async get(caller: Caller, id: string): Promise<ApiKeyView> {
      assertOrganizationContext(caller);
      return readTenant(db, caller.tenant, async (tx) => view(await reachableKey(tx, caller, id)));
    },

    async create(caller: Caller, body: Static<typeof CreateApiKeyBody>, meta: RequestMeta): Promise<ApiKeyWithSecretView> {
      assertOrganizationContext(caller);
      if (!caller.canAccessOrg(body.orgId)) throw orgDenied();
      const expiresAt = futureExpiry(body.expiresAt ?? undefined, deps.now()) ?? null;
      const material = generateKey();
      const scopes = [...new Set(body.scopes ?? [])];
      return withTenant(db, caller.tenant, async (tx) => {
        const row = await keys.insertKey(tx, {
          orgId: body.orgId,
          name: body.name,
          keyHash: material.keyHash,
          keyPrefix: material.keyPrefix,
          scopes,
          expiresAt,
          rateLimit: body.rateLimit ?? 1000,
          createdBy: caller.userId,
        });
        // API.md §2: a missing organization is 404 for system scope; others cannot tell it from one out of reach.
        if (!row) throw caller.scope === 'system' ? notFound('Organization') : orgDenied();
        await recordAudit(tx, event(caller, meta, 'api_key.create', row, { keyPrefix: row.key_prefix, scopes, rateLimit: row.rate_limit, expiresAt: view(row).expiresAt }));
        return { ...view(row), key: material.key, warning: WARNING };
      });
    },

    update(caller: Caller, id: string, body: Static<typeof UpdateApiKeyBody>, meta: RequestMeta): Promise<ApiKeyView> {
      const values = { ...body, ...(body.scopes ? { scopes: [...new Set(body.scopes)] } : {}) };
      const fields = Object.keys(values).filter((k) => values[k as keyof typeof values] !== undefined);
      return changeActiveKey(caller, id, (tx, now) => keys.updateKey(tx, id, now, values), async (tx, { before, after }) => {
        const details: Record<string, unknown> = changeDetails(fields, view(before), view(after));
        if (values.scopes) {
          const next: readonly string[] = values.scopes;
          details.scopeChanges = { added: next.filter((s) => !before.scopes.includes(s)), removed: before.scopes.filter((s) => !next.includes(s)) };
        }
        await recordAudit(tx, event(caller, meta, 'api_key.update', after, details));
        return view(after);
      });
    },

    rotate(caller: Caller, id: string, meta: RequestMeta): Promise<ApiKeyWithSecretView> {
      const material = generateKey();
      return changeActiveKey(caller, id, (tx, now) => keys.rotateKey(tx, id, now, material.keyHash, material.keyPrefix), async (tx, { before, after }) => {
        await recordAudit(tx, event(caller, meta, 'api_key.rotate', after, {
          previousKeyPrefix: before.key_prefix,
          keyPrefix: after.key_prefix,
          usageCountBefore: before.usage_count,
          lastUsedAtBefore: before.last_used_at?.toISOString() ?? null,
          expiresAt: view(after).expiresAt,
        }));
        return { ...view(after), key: material.key, warning: WARNING };
      });
    },

    /** SPEC state table: only an active key is revoked; expired and revoked keys are already dead. */
    revoke(caller: Caller, id: string, meta: RequestMeta): Promise<ApiKeyView> {
      return changeActiveKey(
        caller,
        id,
        async (tx, now) => {
          const after = await keys.revokeKey(tx, id, now);
          return after && { after };
        },
        async (tx, { after: revoked }) => {
          // Revoking changes neither usage nor expiry: the revoked row tells what the key was.
          await recordAudit(tx, event(caller, meta, 'api_key.revoke', revoked, {
            keyPrefix: revoked.key_prefix,
            usageCount: revoked.usage_count,
            lastUsedAt: revoked.last_used_at?.toISOString() ?? null,
            expiresAt: view(revoked).expiresAt,
          }));
          return view(revoked);
        },
        (status) => `This key is already ${status}`,
      );
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
