// Partners: system-scope administration and partner self-service (SPEC "Partner", API.md §2, §4).
import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { Database, Queryable, Transaction } from '../db/database.js';
import { readTenant, withTenant } from '../db/tenant-scope.js';
import { accountWithoutPartner, AppError, notFound } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { callerEvent, changeDetails, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import { ssoConfigView } from '../identity/sso/sso-config.js';
import type { CheckedSsoConfig, SsoConfigs } from '../identity/sso/sso-configs.js';
import * as partners from './partners.repo.js';
import type { CreatePartnerBody, Partner, PartnerSettingsInput, UpdateMyPartnerBody, UpdatePartnerBody } from './schemas.js';

export type PartnerView = Static<typeof Partner>;
type Settings = Static<typeof PartnerSettingsInput>;

/** A URL-safe slug (API.md §4 pattern) from a display name. */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 90)
    .replace(/-+$/g, '');
  return base || 'partner';
}

/** Creates a pending partner for self-signup, suffixing the slug when the name's slug is taken. */
export function createPendingPartner(tx: Queryable, name: string): Promise<partners.PartnerRow> {
  return partners.insertPendingPartner(tx, name, slugFromName(name), randomBytes(3).toString('hex'));
}

function isTimezone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** A body's timezone field (`field` is its path under body), when given, names an IANA zone. */
export function assertTimezone(field: string, value: string | undefined, example: string): void {
  if (value !== undefined && !isTimezone(value)) {
    throw new AppError('VALIDATION_FAILED', `${field} "${value}" is not an IANA timezone name`, {
      errors: [{ path: `body.${field}`, message: `must be an IANA timezone name, e.g. ${example}` }],
    });
  }
}

function assertSettings(settings: Settings | undefined): void {
  assertTimezone('settings.timezone', settings?.timezone, 'Europe/Zurich');
}

/** SPEC: settings are merged key by key, and the nested businessHours and contact objects too. */
export function mergeSettings(current: Record<string, unknown>, patch: Settings): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    const existing = merged[key];
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && existing && typeof existing === 'object' && !Array.isArray(existing)) {
      merged[key] = key === 'businessHours'
        ? { ...existing, ...value, ...('custom' in value ? { custom: { ...((existing as { custom?: object }).custom ?? {}), ...(value as { custom?: object }).custom } } : {}) }
        : { ...existing, ...value };
    } else {
      merged[key] = value;
    }
  }
  return merged;
}

export function partnerView(row: partners.PartnerRow): PartnerView {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    type: row.type as PartnerView['type'],
    plan: row.plan as PartnerView['plan'],
    status: row.status,
    maxOrganizations: row.max_organizations,
    maxDevices: row.max_devices,
    settings: row.settings,
    ssoConfig: ssoConfigView(row.sso_config),
    billingEmail: row.billing_email,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    deletedAt: row.deleted_at?.toISOString() ?? null,
  };
}

/**
 * The partner as a partner-scope caller may see it: a caller that reaches only some organizations
 * must not learn the ids of the others from settings.organizationOrder.
 */
function partnerViewFor(caller: Caller, row: partners.PartnerRow): PartnerView {
  const view = partnerView(row);
  const order = row.settings.organizationOrder;
  if (caller.tenant.scope !== 'partner' || caller.tenant.allOrgs || !Array.isArray(order)) return view;
  return { ...view, settings: { ...row.settings, organizationOrder: order.filter((id) => typeof id === 'string' && caller.canAccessOrg(id)) } };
}

/**
 * Updates a live partner; null when there is none. Settings are merged key by key with the stored
 * ones, and an ssoConfig is built from the stored one (`storeSso`: its secret may be kept), read
 * locked first so a concurrent write cannot be lost; without either, one statement.
 */
async function updateWithSettings(
  tx: Queryable, id: string, body: { settings?: Settings } & partners.PartnerValues, storeSso?: (current: unknown) => Promise<unknown>,
) {
  const values: partners.PartnerValues = { ...body };
  if (body.settings || storeSso) {
    const current = await partners.findPartner(tx, id, true);
    if (!current) return null;
    if (body.settings) values.settings = mergeSettings(current.settings, body.settings);
    if (storeSso) values.ssoConfig = await storeSso(current.sso_config);
  }
  return partners.updatePartner(tx, id, values);
}

export function createPartnersService(deps: { db: Database; recordAudit: RecordAudit; announceChange: (reason: string) => void; ssoConfigs: SsoConfigs }) {
  const { db, recordAudit, ssoConfigs } = deps;
  /** How a checked ssoConfig is written for partner `id` (undefined: the body has none). */
  const ssoWriter = (tx: Transaction, id: string, sso: CheckedSsoConfig | undefined) =>
    sso === undefined ? undefined : (current: unknown) => ssoConfigs.toStore(tx, { partnerId: id, orgId: null }, sso, current);
  const event = (caller: Caller, meta: RequestMeta, action: AuditAction, row: partners.PartnerRow, details: Record<string, unknown>) => // partners belong to no organization: the platform chain
    callerEvent(caller, meta, { orgId: null, action, resource: { type: 'partner', id: row.id, name: row.name }, details });

  return {
    async list(caller: Caller, query: { page?: number; limit?: number }): Promise<PaginatedResult<PartnerView>> {
      const page = pageOf(query);
      const { rows, total } = await readTenant(db, caller.tenant, (tx) => partners.listPartners(tx, page.limit, page.offset, page.withTotal));
      return paginated(rows.map(partnerView), page, total);
    },

    async create(caller: Caller, body: Static<typeof CreatePartnerBody>, meta: RequestMeta): Promise<PartnerView> {
      assertSettings(body.settings);
      const sso = await ssoConfigs.check(caller, body.ssoConfig);
      return withTenant(db, caller.tenant, async (tx) => {
        const ssoConfig = sso === undefined ? undefined : await ssoConfigs.toStore(tx, null, sso, null);
        // Provisioned by an administrator: active unless the request says otherwise (SPEC "Partner").
        // A slug a live partner holds: partners_live_slug refuses it, a 409 (db/unique-conflicts.ts).
        const row = await partners.insertPartner(tx, { ...body, ssoConfig, status: body.status ?? 'active' });
        await recordAudit(tx, event(caller, meta, 'partner.create', row, { slug: row.slug, type: row.type, plan: row.plan, status: row.status }));
        return partnerView(row);
      });
    },

    async get(caller: Caller, id: string): Promise<PartnerView> {
      const row = await readTenant(db, caller.tenant, (tx) => partners.findPartner(tx, id));
      if (!row) throw notFound('Partner');
      return partnerView(row);
    },

    async update(caller: Caller, id: string, body: Static<typeof UpdatePartnerBody>, meta: RequestMeta): Promise<PartnerView> {
      const fields = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
      assertSettings(body.settings);
      const sso = await ssoConfigs.check(caller, body.ssoConfig); // the provider is asked before the transaction
      const view = await withTenant(db, caller.tenant, async (tx) => {
        const changed = await updateWithSettings(tx, id, body, ssoWriter(tx, id, sso)); // a taken slug: partners_live_slug, 409
        if (!changed) throw notFound('Partner');
        const { before, after } = changed;
        await recordAudit(tx, event(caller, meta, 'partner.update', after, changeDetails(fields, partnerView(before), partnerView(after))));
        return partnerView(after);
      });
      deps.announceChange('partner updated'); // status changes reach the partner guard at once
      return view;
    },

    async remove(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
      await withTenant(db, caller.tenant, async (tx) => {
        const row = await partners.softDeletePartner(tx, id, new Date());
        if (!row) throw notFound('Partner');
        await recordAudit(tx, event(caller, meta, 'partner.delete', row, { slug: row.slug }));
      });
      deps.announceChange('partner deleted');
      return { success: true };
    },

    async getMine(caller: Caller): Promise<PartnerView> {
      if (!caller.partnerId) throw accountWithoutPartner();
      const row = await readTenant(db, caller.tenant, (tx) => partners.findPartner(tx, caller.partnerId!));
      if (!row) throw notFound('Partner');
      return partnerViewFor(caller, row);
    },

    async updateMine(caller: Caller, body: Static<typeof UpdateMyPartnerBody>, meta: RequestMeta): Promise<PartnerView> {
      if (!caller.partnerId) throw accountWithoutPartner();
      const fields = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
      assertSettings(body.settings);
      const sso = await ssoConfigs.check(caller, body.ssoConfig);
      return withTenant(db, caller.tenant, async (tx) => {
        const changed = await updateWithSettings(tx, caller.partnerId!, body, ssoWriter(tx, caller.partnerId!, sso));
        if (!changed) throw notFound('Partner');
        const { before, after } = changed;
        const settingsKeys = body.settings ? Object.keys(body.settings).map((k) => `settings.${k}`) : [];
        await recordAudit(tx, event(caller, meta, 'partner.settings.update', after, {
          ...changeDetails(fields, partnerView(before), partnerView(after)),
          changedFields: [...fields.filter((f) => f !== 'settings'), ...settingsKeys],
        }));
        return partnerViewFor(caller, after);
      });
    },
  };
}

export type PartnersService = ReturnType<typeof createPartnersService>;
