// Organizations (SPEC "Organization", the Organizations endpoint table, API.md §2 and §4).
import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { Database, Transaction } from '../db/database.js';
import { applyTenantScope, readTenant, withTenant } from '../db/tenant-scope.js';
import { AppError, limitReached, notFound, partnerMismatch, reversedRange } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { callerEvent, changeDetails, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import { ssoConfigView } from '../identity/sso/sso-config.js';
import type { SsoConfigs } from '../identity/sso/sso-configs.js';
import * as orgs from './organizations.repo.js';
import type { CreateOrganizationBody, Organization, UpdateOrganizationBody } from './schemas.js';

export type OrganizationView = Static<typeof Organization>;

export function organizationView(row: orgs.OrganizationRow): OrganizationView {
  return {
    id: row.id,
    partnerId: row.partner_id,
    name: row.name,
    slug: row.slug,
    type: row.type as OrganizationView['type'],
    status: row.status as OrganizationView['status'],
    maxDevices: row.max_devices,
    settings: row.settings,
    ssoConfig: ssoConfigView(row.sso_config),
    contractStart: row.contract_start?.toISOString() ?? null,
    contractEnd: row.contract_end?.toISOString() ?? null,
    billingContact: row.billing_contact,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    deletedAt: row.deleted_at?.toISOString() ?? null,
  };
}

function assertContract(start: string | null | undefined, end: string | null | undefined): void {
  if (start && end && new Date(start) > new Date(end)) throw reversedRange('contractStart', 'contractEnd');
}

/**
 * The order a caller that reaches only some organizations writes: in the partner's current display
 * order (`display`, every live organization), the slots its organizations occupy are filled with
 * `callerOrder` (those same organizations, reordered); every other organization keeps its slot.
 */
function mergeOrganizationOrder(display: readonly string[], callerOrder: readonly string[]): string[] {
  const mine = new Set(callerOrder);
  let next = 0;
  return display.map((id) => (mine.has(id) ? callerOrder[next++]! : id));
}

const partnerContextRequired = (action: 'create' | 'order') =>
  new AppError('VALIDATION_FAILED', `Partner context required to ${action} organizations`);

export function createOrganizationsService(deps: {
  db: Database;
  recordAudit: RecordAudit;
  announceChange: (reason: string) => void;
  ssoConfigs: SsoConfigs;
  /** After a deletion commits: its agents' open sockets must close too (their tokens no longer work). */
  onDeleted?: (orgId: string) => void;
}) {
  const { db, recordAudit, ssoConfigs } = deps;
  const event = (caller: Caller, meta: RequestMeta, action: AuditAction, row: orgs.OrganizationRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.id, action, resource: { type: 'organization', id: row.id, name: row.name }, details });

  /** An organization the caller reaches, or 404 (partner scope must not learn that others exist). */
  async function reachable(tx: Transaction, caller: Caller, id: string): Promise<orgs.OrganizationRow> {
    const row = caller.canAccessOrg(id) ? await orgs.findOrganization(tx, id) : null;
    if (!row) throw notFound('Organization');
    return row;
  }

  return {
    /** GET /orgs/: every organization the caller reaches, unpaginated. */
    async accessible(caller: Caller): Promise<{ data: OrganizationView[] }> {
      if (caller.accessibleOrgIds?.length === 0) return { data: [] };
      const { rows } = await readTenant(db, caller.tenant, (tx) =>
        orgs.listOrganizations(tx, { ids: caller.accessibleOrgIds, partnerOrder: caller.scope !== 'system' }, null),
      );
      return { data: rows.map(organizationView) };
    },

    async list(caller: Caller, query: { page?: number; limit?: number; partnerId?: string; search?: string }): Promise<PaginatedResult<OrganizationView>> {
      const page = pageOf(query);
      if (caller.accessibleOrgIds?.length === 0 || (caller.scope === 'partner' && query.partnerId && query.partnerId !== caller.partnerId)) {
        return paginated([], page, 0);
      }
      const filter = {
        ids: caller.accessibleOrgIds,
        partnerOrder: caller.scope !== 'system' || query.partnerId !== undefined,
        ...(query.partnerId ? { partnerId: query.partnerId } : {}),
        ...(query.search !== undefined ? { search: query.search } : {}),
      };
      const { rows, total } = await readTenant(db, caller.tenant, (tx) => orgs.listOrganizations(tx, filter, page));
      return paginated(rows.map(organizationView), page, total);
    },

    async create(caller: Caller, body: Static<typeof CreateOrganizationBody>, meta: RequestMeta): Promise<OrganizationView> {
      let partnerId: string;
      if (caller.scope === 'partner') {
        if (!caller.partnerId) throw partnerContextRequired('create');
        if (body.partnerId && body.partnerId !== caller.partnerId) throw partnerMismatch();
        // A narrower partner user would create an organization it could then neither see nor audit.
        if (caller.tenant.scope !== 'partner' || !caller.tenant.allOrgs) {
          throw new AppError('PERMISSION_DENIED', 'Creating organizations needs access to all of the partner’s organizations');
        }
        partnerId = caller.partnerId;
      } else {
        if (!body.partnerId) throw new AppError('VALIDATION_FAILED', 'partnerId is required for system scope');
        partnerId = body.partnerId;
      }
      assertContract(body.contractStart, body.contractEnd);
      const sso = await ssoConfigs.check(caller, body.ssoConfig); // the provider is asked before the transaction
      const { partnerId: _ignored, ...values } = body;
      const id = randomUUID();
      // The caller's reach includes the new organization from BEGIN on (a fresh id: nothing else
      // becomes visible), so the entry can go into the organization's own chain.
      const tenant = caller.tenant.scope === 'partner' ? { ...caller.tenant, orgIds: [...caller.tenant.orgIds, id] } : caller.tenant;
      const view = await withTenant(db, tenant, async (tx) => {
        const partner = await orgs.lockPartner(tx, partnerId);
        if (!partner) throw notFound('Partner');
        if (sso !== undefined) values.ssoConfig = await ssoConfigs.toStore(tx, { partnerId, orgId: id }, sso, null);
        const row = await orgs.insertOrganization(tx, id, partnerId, values, partner.max_organizations); // a taken slug: organizations_live_slug, 409
        if (!row) throw limitReached('partner', partner.max_organizations!, 'organizations');
        await recordAudit(tx, event(caller, meta, 'organization.create', row, { partnerId, status: row.status, type: row.type }));
        return organizationView(row);
      });
      deps.announceChange('organization created');
      return view;
    },

    async get(caller: Caller, id: string): Promise<OrganizationView> {
      return organizationView(await readTenant(db, caller.tenant, (tx) => reachable(tx, caller, id)));
    },

    async update(caller: Caller, id: string, body: Static<typeof UpdateOrganizationBody>, meta: RequestMeta): Promise<OrganizationView> {
      const fields = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
      if (!caller.canAccessOrg(id)) throw notFound('Organization');
      const sso = await ssoConfigs.check(caller, body.ssoConfig); // the provider is asked before the transaction
      const view = await withTenant(db, caller.tenant, async (tx) => {
        const values: orgs.OrganizationValues = { ...body };
        if (sso !== undefined) {
          // Built from the stored configuration (an omitted secret is kept), read locked.
          const current = await orgs.findOrganization(tx, id, true);
          if (!current) throw notFound('Organization');
          values.ssoConfig = await ssoConfigs.toStore(tx, { partnerId: current.partner_id, orgId: id }, sso, current.sso_config);
        }
        const updated = await orgs.updateOrganization(tx, id, values); // a taken slug: organizations_live_slug, 409
        if (!updated) {
          // Not updated: the organization is gone, or the contract would end before it starts.
          if (!(await orgs.findOrganization(tx, id))) throw notFound('Organization');
          throw reversedRange('contractStart', 'contractEnd');
        }
        const after = organizationView(updated.after);
        await recordAudit(tx, event(caller, meta, 'organization.update', updated.after, changeDetails(fields, organizationView(updated.before), after)));
        return after;
      });
      deps.announceChange('organization updated'); // status reaches the suspended-organization guard
      return view;
    },

    async remove(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
      if (!caller.canAccessOrg(id)) throw notFound('Organization');
      await withTenant(db, caller.tenant, async (tx) => {
        const row = await orgs.softDeleteOrganization(tx, id, new Date());
        if (!row) throw notFound('Organization');
        await recordAudit(tx, event(caller, meta, 'organization.delete', row, { partnerId: row.partner_id }));
      });
      deps.announceChange('organization deleted');
      deps.onDeleted?.(id);
      return { success: true };
    },

    /**
     * PATCH /orgs/organizations/order: unknown or deleted ids dropped, omitted ones appended. A
     * caller reaching only some of the partner's organizations reorders those only (see
     * mergeOrganizationOrder) and gets back only those.
     */
    async setOrder(caller: Caller, order: string[], named?: string): Promise<{ organizationOrder: string[] }> {
      let partnerId: string;
      if (caller.scope === 'system') {
        // SPEC gives this endpoint to partner scope; a system caller may use it by naming the partner.
        if (!named) throw new AppError('PERMISSION_DENIED', 'A system-scope caller orders a partner’s organizations by naming it: partnerId is required');
        partnerId = named;
      } else {
        if (!caller.partnerId) throw partnerContextRequired('order');
        if (named && named !== caller.partnerId) throw partnerMismatch();
        partnerId = caller.partnerId;
      }
      return withTenant(db, caller.tenant, async (tx) => {
        // Row-level security: only what the caller reaches. The partner's row is locked, so order
        // writes (and creations) take turns and two narrow callers cannot lose each other's slots.
        const live = await orgs.lockedRegistrationOrder(tx, partnerId);
        if (!live) throw notFound('Partner');
        const known = new Set(live);
        const kept = [...new Set(order)].filter((id) => known.has(id));
        const cleaned = [...kept, ...live.filter((id) => !kept.includes(id))];
        const tenant = caller.tenant;
        if (tenant.scope !== 'partner' || tenant.allOrgs) {
          await orgs.setOrganizationOrder(tx, partnerId, cleaned);
          return { organizationOrder: cleaned };
        }
        if (cleaned.length === 0) return { organizationOrder: [] };
        // The slots of the organizations the caller cannot see are read under the partner's whole
        // reach, for this one query; the ids never leave this function.
        await applyTenantScope(tx, db.appRole, { ...tenant, allOrgs: true });
        const { rows } = await orgs.listOrganizations(tx, { partnerId, partnerOrder: true }, null);
        await applyTenantScope(tx, db.appRole, tenant);
        const display = rows.map((row) => row.id);
        const present = new Set(display);
        const mine = cleaned.filter((id) => present.has(id));
        await orgs.setOrganizationOrder(tx, partnerId, mergeOrganizationOrder(display, mine));
        return { organizationOrder: mine };
      });
    },
  };
}

export type OrganizationsService = ReturnType<typeof createOrganizationsService>;
