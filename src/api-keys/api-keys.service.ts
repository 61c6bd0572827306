// API key management (SPEC "API key", its state table, "Authentication" 7 and 12; API.md §5).
// Keys of an organization outside the caller's reach are 404; a create naming one is 403.
import type { Static } from 'typebox';
import type { Database } from '../db/database.js';
import { withTenant } from '../db/tenant-scope.js';
import { accountWithoutOrg, AppError, emptyUpdate, notFound, orgDenied } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { futureExpiry } from '../http/validation.js';
import { callerEvent, changeDetails, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import * as keys from './api-keys.repo.js';
import { organizationIsLive } from '../db/tenant-lookups.js';
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

  function assertKeyManager(caller: Caller): void {
    // API.md §2: an organization-scope user must carry its organization to manage keys.
    if (caller.scope === 'organization' && !caller.orgId) throw accountWithoutOrg();
  }

  /** A key of a reachable organization, or 404 (RLS hides the others too). */
  async function reachableKey(tx: Parameters<Parameters<typeof withTenant>[2]>[0], caller: Caller, id: string, forUpdate: boolean) {
    const row = await keys.findKey(tx, id, new Date(deps.now()), forUpdate);
    if (!row || !caller.canAccessOrg(row.org_id)) throw notFound('API key');
    return row;
  }

  async function changeActiveKey(
    caller: Caller,
    id: string,
    change: (tx: Parameters<Parameters<typeof withTenant>[2]>[0], current: keys.ApiKeyRow) => Promise<{ row: keys.ApiKeyRow; result: ApiKeyView | ApiKeyWithSecretView }>,
  ) {
    assertKeyManager(caller);
    const { row, result } = await withTenant(db, caller.tenant, async (tx) => {
      const current = await reachableKey(tx, caller, id, true);
      if (current.status !== 'active') {
        throw new AppError('API_KEY_NOT_ACTIVE', `Only active keys can be changed; this key is ${current.status}`);
      }
      return change(tx, current);
    });
    await deps.keyChanged(row.id, row.version);
    return result;
  }

  return {
    async list(caller: Caller, query: { page?: number; limit?: number; orgId?: string; status?: keys.ApiKeyStatus }): Promise<PaginatedResult<ApiKeyView>> {
      assertKeyManager(caller);
      const page = pageOf(query);
      const orgIds = query.orgId ? (caller.canAccessOrg(query.orgId) ? [query.orgId] : []) : caller.accessibleOrgIds;
      if (orgIds?.length === 0) return paginated([], page, 0);
      const { rows, total } = await withTenant(db, caller.tenant, (tx) =>
        keys.listKeys(tx, { orgIds, status: query.status, now: new Date(deps.now()) }, page.limit, page.offset, page.withTotal),
      );
      return paginated(rows.map(view), page, total);
    },

    async get(caller: Caller, id: string): Promise<ApiKeyView> {
      assertKeyManager(caller);
      return withTenant(db, caller.tenant, async (tx) => view(await reachableKey(tx, caller, id, false)));
    },

    async create(caller: Caller, body: Static<typeof CreateApiKeyBody>, meta: RequestMeta): Promise<ApiKeyWithSecretView> {
      assertKeyManager(caller);
      if (!caller.canAccessOrg(body.orgId)) throw orgDenied();
      const expiresAt = futureExpiry(body.expiresAt ?? undefined, deps.now()) ?? null;
      const material = generateKey();
      const scopes = [...new Set(body.scopes ?? [])];
      return withTenant(db, caller.tenant, async (tx) => {
        if (!(await organizationIsLive(tx, body.orgId))) throw caller.scope === 'system' ? notFound('Organization') : orgDenied();
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
        await recordAudit(tx, event(caller, meta, 'api_key.create', row, { keyPrefix: row.key_prefix, scopes, rateLimit: row.rate_limit, expiresAt: view(row).expiresAt }));
        return { ...view(row), key: material.key, warning: WARNING };
      });
    },

    update(caller: Caller, id: string, body: Static<typeof UpdateApiKeyBody>, meta: RequestMeta): Promise<ApiKeyView> {
      const values = { ...body, ...(body.scopes ? { scopes: [...new Set(body.scopes)] } : {}) };
      const fields = Object.keys(values).filter((k) => values[k as keyof typeof values] !== undefined);
      if (fields.length === 0) return Promise.reject(emptyUpdate('name, scopes or rateLimit'));
      return changeActiveKey(caller, id, async (tx, current) => {
        const row = await keys.updateKey(tx, id, values);
        const details: Record<string, unknown> = changeDetails(fields, view(current), view(row));
        if (values.scopes) {
          const next: readonly string[] = values.scopes;
          details.scopeChanges = { added: next.filter((s) => !current.scopes.includes(s)), removed: current.scopes.filter((s) => !next.includes(s)) };
        }
        await recordAudit(tx, event(caller, meta, 'api_key.update', row, details));
        return { row, result: view(row) };
      });
    },

    rotate(caller: Caller, id: string, meta: RequestMeta): Promise<ApiKeyWithSecretView> {
      const material = generateKey();
      return changeActiveKey(caller, id, async (tx, current) => {
        const row = await keys.rotateKey(tx, id, material.keyHash, material.keyPrefix);
        await recordAudit(tx, event(caller, meta, 'api_key.rotate', row, {
          previousKeyPrefix: current.key_prefix,
          keyPrefix: row.key_prefix,
          usageCountBefore: current.usage_count,
          lastUsedAtBefore: current.last_used_at?.toISOString() ?? null,
          expiresAt: view(row).expiresAt,
        }));
        return { row, result: { ...view(row), key: material.key, warning: WARNING } };
      }) as Promise<ApiKeyWithSecretView>;
    },

    async revoke(caller: Caller, id: string, meta: RequestMeta): Promise<ApiKeyView> {
      assertKeyManager(caller);
      const row = await withTenant(db, caller.tenant, async (tx) => {
        const current = await reachableKey(tx, caller, id, true);
        // SPEC state table: only an active key is revoked; expired and revoked keys are already dead.
        if (current.status !== 'active') throw new AppError('API_KEY_NOT_ACTIVE', `This key is already ${current.status}`);
        const revoked = await keys.revokeKey(tx, id);
        await recordAudit(tx, event(caller, meta, 'api_key.revoke', revoked, {
          keyPrefix: revoked.key_prefix,
          usageCount: current.usage_count,
          lastUsedAt: current.last_used_at?.toISOString() ?? null,
          expiresAt: view(current).expiresAt,
        }));
        return revoked;
      });
      await deps.keyChanged(row.id, row.version);
      return view(row);
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
