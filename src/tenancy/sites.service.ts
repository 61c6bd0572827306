// Sites (SPEC "Site", the Sites endpoint table and "Authentication" 11: the site access check).
import type { Static } from 'typebox';
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, readTenant, withTenant } from '../db/tenant-scope.js';
import { AppError, notFound, orgDenied, siteDenied } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { callerEvent, changeDetails, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import { assertTimezone } from './partners.service.js';
import * as sites from './sites.repo.js';
import { organizationIsLive } from '../db/tenant-lookups.js';
import type { CreateSiteBody, Site, UpdateSiteBody } from './schemas.js';
import type { SiteListCache } from './site-list-cache.js';

export type SiteView = Static<typeof Site>;

export function siteView(row: sites.SiteRow): SiteView {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    address: row.address,
    timezone: row.timezone,
    contact: row.contact,
    settings: row.settings,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const assertSiteTimezone = (timezone: string | undefined) => assertTimezone('timezone', timezone, 'America/New_York');

export function createSitesService(deps: { db: Database; recordAudit: RecordAudit; listCache: SiteListCache<SiteView> }) {
  const { db, recordAudit, listCache } = deps;
  const event = (caller: Caller, meta: RequestMeta, action: AuditAction, row: sites.SiteRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.org_id, action, resource: { type: 'site', id: row.id, name: row.name }, details });

  /**
   * Why a site the caller's scope cannot see is missing: SPEC "Authentication" 11 makes a site that
   * exists in an organization out of reach 403, not 404. Only this failure path looks in the
   * system scope (a transaction of its own); the request's own transaction found nothing.
   */
  async function siteMissing(caller: Caller, id: string): Promise<never> {
    const location = await withTenant(db, SYSTEM_SCOPE, (tx) => sites.locateSite(tx, id));
    if (location && !caller.canAccessOrg(location.org_id)) throw siteDenied();
    throw notFound('Site');
  }

  /** The request's transaction (read-only for a lookup); a site missing from its view is 403 or 404 (siteMissing). */
  async function withSite<T>(caller: Caller, id: string, fn: (tx: Transaction) => Promise<T | null>, options?: { readOnly: true }): Promise<T> {
    const result = await withTenant(db, caller.tenant, fn, options);
    return result ?? siteMissing(caller, id);
  }

  return {
    /**
     * Where enrolment puts a device no key or agent placed (API.md §6): the organization's oldest
     * site, else a new site "Default". Runs in the enrolment's transaction.
     */
    async siteForNewDevice(tx: Transaction, orgId: string): Promise<string> {
      const oldest = await sites.oldestSiteId(tx, orgId);
      if (oldest) return oldest;
      const created = await sites.insertSite(tx, orgId, { name: 'Default' });
      tx.afterCommit(listCache.changed);
      return created.id;
    },

    async list(caller: Caller, query: { page?: number; limit?: number; orgId?: string; organizationId?: string; search?: string }): Promise<PaginatedResult<SiteView>> {
      const page = pageOf(query);
      const orgId = query.orgId ?? query.organizationId;
      const orgIds = orgId ? (caller.canAccessOrg(orgId) ? [orgId] : []) : caller.accessibleOrgIds;
      if (orgIds?.length === 0) return paginated([], page, 0);
      if (query.search !== undefined) {
        // Searches are not cached: there are as many of them as there are strings, and their pages
        // would push the list's own out of the cache. Their totals are counted, so skipCount skips it.
        const { rows, total } = await readTenant(db, caller.tenant, (tx) => sites.listSites(tx, { orgIds, search: query.search }, page));
        return paginated(rows.map(siteView), page, total);
      }
      // The cache keeps counted pages (totals come from per-organization counts, cheap); skipCount
      // only drops them from the answer.
      let result = listCache.get(orgIds, page.page, page.limit);
      if (!result) {
        const { rows, total } = await readTenant(db, caller.tenant, (tx) => sites.listSites(tx, { orgIds }, { ...page, withTotal: true }));
        result = paginated(rows.map(siteView), { ...page, withTotal: true }, total);
        listCache.set(orgIds, page.page, page.limit, result);
      }
      return page.withTotal ? result : paginated(result.data, page, null);
    },

    async create(caller: Caller, body: Static<typeof CreateSiteBody>, meta: RequestMeta): Promise<SiteView> {
      if (!caller.canAccessOrg(body.orgId)) throw orgDenied();
      assertSiteTimezone(body.timezone);
      const { orgId, ...values } = body;
      return withTenant(db, caller.tenant, async (tx) => {
        // API.md §2: a missing organization is 404 for system scope; others cannot tell it from one out of reach.
        if (!(await organizationIsLive(tx, orgId))) throw caller.scope === 'system' ? notFound('Organization') : orgDenied();
        const row = await sites.insertSite(tx, orgId, { ...values, timezone: values.timezone ?? 'UTC' });
        tx.afterCommit(listCache.changed);
        await recordAudit(tx, event(caller, meta, 'site.create', row, { orgId, timezone: row.timezone }));
        return siteView(row);
      });
    },

    async get(caller: Caller, id: string): Promise<SiteView> {
      return withSite(caller, id, async (tx) => {
        const row = await sites.findSite(tx, id);
        if (row && !caller.canAccessOrg(row.org_id)) throw siteDenied();
        return row && siteView(row);
      }, { readOnly: true });
    },

    async update(caller: Caller, id: string, body: Static<typeof UpdateSiteBody>, meta: RequestMeta): Promise<SiteView> {
      const fields = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
      assertSiteTimezone(body.timezone);
      return withSite(caller, id, async (tx) => {
        const updated = await sites.updateSite(tx, id, body);
        if (!updated) return null;
        const { before, after } = updated;
        if (!caller.canAccessOrg(after.org_id)) throw siteDenied(); // rolls the update back
        tx.afterCommit(listCache.changed);
        await recordAudit(tx, event(caller, meta, 'site.update', after, changeDetails(fields, siteView(before), siteView(after))));
        return siteView(after);
      });
    },

    async remove(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
      return withSite(caller, id, async (tx) => {
        const row = await sites.findSiteForDelete(tx, id);
        if (!row) return null;
        if (!caller.canAccessOrg(row.org_id)) throw siteDenied();
        if (row.has_devices) throw new AppError('CONFLICT', 'This site still has devices (decommissioned ones included) and cannot be deleted');
        await sites.deleteSite(tx, id);
        tx.afterCommit(listCache.changed);
        const { has_devices: _, ...site } = row;
        await recordAudit(tx, event(caller, meta, 'site.delete', site, { before: siteView(site) }));
        return { success: true as const };
      });
    },
  };
}

export type SitesService = ReturnType<typeof createSitesService>;
