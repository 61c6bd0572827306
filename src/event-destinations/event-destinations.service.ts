// Event destinations (API.md §9): who may create which, their limits, secrets and audit. The
// sender (sender.ts) delivers; this module's routes only manage.
import type { Static } from 'typebox';
import type { Database, Transaction } from '../db/database.js';
import { readTenant, withTenant } from '../db/tenant-scope.js';
import {
  accountWithoutOrg, AppError, invalidRequest, notFound, orgDenied, partnerMismatch, permissionDenied,
} from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { callerEvent, changeDetails, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import type { SecretBox } from '../secret-box.js';
import * as repo from './event-destinations.repo.js';
import { checkDestinationUrl, type OutboundPolicy } from './outbound-address.js';
import { newWebhookSecret, type DeliveryResult } from './webhook-transport.js';
import type { CreateDestinationBody, Delivery, Destination, ReplayBody, UpdateDestinationBody } from './event-destinations.schemas.js';

export type DestinationView = Static<typeof Destination>;

/** API.md §9: per organization, and per partner (partner-wide ones); disabled ones count. */
export const DESTINATION_CAP = 20;
/** Both secrets sign for this long after a rotation. */
export const PREVIOUS_SECRET_MS = 24 * 3600_000;
/** The delivery log keeps a week. */
export const DELIVERY_LOG_MS = 7 * 24 * 3600_000;
const PLATFORM_CHAIN_ID = '00000000-0000-0000-0000-000000000000';

export function destinationView(row: repo.DestinationRow): DestinationView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    url: row.url,
    orgId: row.org_id,
    partnerId: row.partner_id,
    filter: { actions: row.filter_actions, results: row.filter_results as DestinationView['filter']['results'] },
    enabled: row.enabled,
    status: !row.enabled ? 'disabled' : row.failing ? 'failing' : 'active',
    lastSuccessAt: row.last_success_at?.toISOString() ?? null,
    lastFailureAt: row.last_failure_at?.toISOString() ?? null,
    lastError: row.last_error,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The URL as the audit records it: without query or fragment, which may carry a receiver's token. */
function auditUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '';
  }
}

export function createEventDestinationsService(deps: {
  db: Database;
  recordAudit: RecordAudit;
  secrets: SecretBox;
  policy: OutboundPolicy;
  /** Sends one unchained test event now (sender.ts). */
  sendTest(row: repo.DestinationRow): Promise<DeliveryResult>;
  /** Asks the sender to look again (after a replay or a change). */
  wake(): void;
  now: () => number;
}) {
  const { db, recordAudit } = deps;

  // Organization destinations record in their organization's chain; partner- and platform-wide
  // ones in the platform chain (API.md §9).
  const event = (caller: Caller, meta: RequestMeta, action: AuditAction, row: repo.DestinationRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.org_id, action, resource: { type: 'event_destination', id: row.id, name: row.name }, details });

  /** Whether the caller reaches this destination (RLS agrees; this decides the 404). */
  function reaches(caller: Caller, row: repo.DestinationRow): boolean {
    if (caller.scope === 'system') return true;
    if (row.org_id) return caller.canAccessOrg(row.org_id);
    return caller.scope === 'partner' && row.partner_id === caller.partnerId && caller.tenant.scope === 'partner' && caller.tenant.allOrgs;
  }

  async function reachable(tx: Transaction, caller: Caller, id: string, lock = false): Promise<repo.DestinationRow> {
    const row = await repo.findDestination(tx, id, lock);
    if (!row || !reaches(caller, row)) throw notFound('Event destination');
    return row;
  }

  /**
   * API.md §9: the owner a create names, checked against the caller's reach. A partnerId the caller
   * may not name is refused as such (403) before naming both is (400).
   */
  function ownerOf(caller: Caller, body: { orgId?: string; partnerId?: string }): { orgId: string | null; partnerId: string | null } {
    const both = () => invalidRequest([{ path: 'body', message: 'give orgId or partnerId, not both' }]);
    if (caller.scope === 'organization') {
      if (!caller.orgId) throw accountWithoutOrg();
      if (body.partnerId) throw permissionDenied('An organization user cannot create partner-wide destinations');
      const orgId = body.orgId ?? caller.orgId;
      if (!caller.canAccessOrg(orgId)) throw orgDenied();
      return { orgId, partnerId: null };
    }
    if (caller.scope === 'partner') {
      if (body.partnerId && body.partnerId !== caller.partnerId) throw partnerMismatch();
      if (body.orgId && body.partnerId) throw both();
      if (body.orgId) {
        if (!caller.canAccessOrg(body.orgId)) throw orgDenied();
        return { orgId: body.orgId, partnerId: null };
      }
      if (!body.partnerId) throw invalidRequest([{ path: 'body.orgId', message: 'give orgId or partnerId' }]);
      if (body.partnerId !== caller.partnerId) throw partnerMismatch();
      if (!(caller.tenant.scope === 'partner' && caller.tenant.allOrgs)) {
        throw permissionDenied('A partner-wide destination needs access to all of the partner’s organizations');
      }
      return { orgId: null, partnerId: body.partnerId };
    }
    if (body.orgId && body.partnerId) throw both();
    return { orgId: body.orgId ?? null, partnerId: body.partnerId ?? null };
  }

  function checkCertificate(kind: repo.DestinationKind, caCertificate: string | null | undefined): void {
    if (caCertificate && kind !== 'syslog') {
      throw invalidRequest([{ path: 'body.caCertificate', message: 'only syslog destinations take a CA certificate' }]);
    }
    if (caCertificate && !/-----BEGIN CERTIFICATE-----/.test(caCertificate)) {
      throw invalidRequest([{ path: 'body.caCertificate', message: 'must be a PEM certificate' }]);
    }
  }

  return {
    async list(caller: Caller, query: { page?: number; limit?: number; skipCount?: boolean; orgId?: string; partnerId?: string }): Promise<PaginatedResult<DestinationView>> {
      const page = pageOf(query);
      const wholePartner = caller.tenant.scope === 'partner' && caller.tenant.allOrgs ? caller.partnerId : null;
      if (query.orgId && !caller.canAccessOrg(query.orgId)) return paginated([], page, 0);
      if (query.partnerId && caller.scope !== 'system' && query.partnerId !== wholePartner) return paginated([], page, 0);
      const { rows, total } = await readTenant(db, caller.tenant, (tx) =>
        repo.listDestinations(tx, {
          orgIds: caller.accessibleOrgIds,
          orgId: query.orgId,
          partnerId: query.partnerId,
          includePartnerWide: wholePartner,
          includePlatform: caller.scope === 'system',
        }, page.limit, page.offset, page.withTotal),
      );
      return paginated(rows.map(destinationView), page, total);
    },

    async get(caller: Caller, id: string): Promise<DestinationView> {
      return readTenant(db, caller.tenant, async (tx) => destinationView(await reachable(tx, caller, id)));
    },

    async create(caller: Caller, body: Static<typeof CreateDestinationBody>, meta: RequestMeta): Promise<DestinationView & { secret?: string }> {
      const owner = ownerOf(caller, body);
      checkCertificate(body.kind, body.caCertificate);
      await checkDestinationUrl(body.kind, body.url, deps.policy);
      const secret = body.kind === 'webhook' ? newWebhookSecret() : null;
      return withTenant(db, caller.tenant, async (tx) => {
        const row = await repo.insertDestination(tx, {
          ...owner,
          name: body.name,
          kind: body.kind,
          url: body.url,
          actions: [...new Set(body.filter?.actions ?? [])],
          results: [...new Set(body.filter?.results ?? [])],
          caCertificate: body.caCertificate ?? null,
          enabled: body.enabled ?? true,
          secretSealed: secret ? deps.secrets.seal(secret) : null,
          createdBy: caller.userId,
        }, DESTINATION_CAP);
        if (row === 'owner missing') {
          // API.md §2: a missing organization is 404 for system scope; others cannot tell it from one out of reach.
          if (caller.scope !== 'system') throw owner.orgId ? orgDenied() : partnerMismatch();
          throw notFound(owner.orgId ? 'Organization' : 'Partner');
        }
        if (row === 'limit') {
          const whose = owner.orgId ? 'organization' : owner.partnerId ? 'partner' : 'platform';
          throw new AppError('LIMIT_REACHED', `This ${whose} has reached its limit of ${DESTINATION_CAP} event destinations`);
        }
        const view = destinationView(row);
        await recordAudit(tx, event(caller, meta, 'event_destination.create', row, {
          kind: row.kind, url: auditUrl(row.url), orgId: row.org_id, partnerId: row.partner_id, filter: view.filter, enabled: row.enabled,
        }));
        deps.wake();
        return secret ? { ...view, secret } : view;
      });
    },

    async update(caller: Caller, id: string, body: Static<typeof UpdateDestinationBody>, meta: RequestMeta): Promise<DestinationView> {
      const fields = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
      return withTenant(db, caller.tenant, async (tx) => {
        const before = await reachable(tx, caller, id, true);
        checkCertificate(before.kind, body.caCertificate);
        if (body.url !== undefined) await checkDestinationUrl(before.kind, body.url, deps.policy);
        const after = await repo.updateDestination(tx, id, {
          name: body.name,
          url: body.url,
          // A PATCH of filter replaces it whole (API.md §9).
          actions: body.filter ? [...new Set(body.filter.actions ?? [])] : undefined,
          results: body.filter ? [...new Set(body.filter.results ?? [])] : undefined,
          caCertificate: body.caCertificate,
          enabled: body.enabled,
        });
        const shown = (v: DestinationView) => ({ ...v, url: auditUrl(v.url), caCertificate: undefined });
        await recordAudit(tx, event(caller, meta, 'event_destination.update', after, changeDetails(fields, shown(destinationView(before)), shown(destinationView(after)), ['caCertificate'])));
        deps.wake();
        return destinationView(after);
      });
    },

    async remove(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
      await withTenant(db, caller.tenant, async (tx) => {
        const row = await reachable(tx, caller, id, true);
        await recordAudit(tx, event(caller, meta, 'event_destination.delete', row, { kind: row.kind, url: auditUrl(row.url) }));
        await repo.deleteDestination(tx, id);
      });
      return { success: true };
    },

    async rotateSecret(caller: Caller, id: string, meta: RequestMeta): Promise<{ secret: string }> {
      return withTenant(db, caller.tenant, async (tx) => {
        const row = await reachable(tx, caller, id, true);
        if (row.kind !== 'webhook') throw invalidRequest([{ path: 'params.id', message: 'only webhook destinations have a signing secret' }]);
        const secret = newWebhookSecret();
        const previousUntil = new Date(deps.now() + PREVIOUS_SECRET_MS);
        const after = await repo.rotateSecret(tx, id, deps.secrets.seal(secret), previousUntil);
        await recordAudit(tx, event(caller, meta, 'event_destination.rotate_secret', after, { previousSecretSignsUntil: previousUntil.toISOString() }));
        return { secret };
      });
    },

    async replay(caller: Caller, id: string, body: Static<typeof ReplayBody>, meta: RequestMeta): Promise<{ success: true }> {
      await withTenant(db, caller.tenant, async (tx) => {
        const row = await reachable(tx, caller, id, true);
        let chainOrg: string | null;
        if (row.org_id) {
          if (body.orgId !== undefined && body.orgId !== row.org_id) {
            throw invalidRequest([{ path: 'body.orgId', message: 'not the organization this destination covers' }]);
          }
          chainOrg = row.org_id;
        } else {
          if (body.orgId === undefined) {
            throw invalidRequest([{ path: 'body.orgId', message: 'required: this destination covers several chains (null names the platform chain)' }]);
          }
          chainOrg = body.orgId;
          if (chainOrg === null && row.partner_id) {
            throw invalidRequest([{ path: 'body.orgId', message: 'a partner-wide destination does not cover the platform chain' }]);
          }
          if (chainOrg !== null) {
            const { rows } = await tx.query(`select 1 from organizations where id = $1 and ($2::uuid is null or partner_id = $2)`, [chainOrg, row.partner_id]);
            if (rows.length === 0) throw invalidRequest([{ path: 'body.orgId', message: 'not an organization this destination covers' }]);
          }
        }
        await repo.rewindCursor(tx, id, chainOrg ?? PLATFORM_CHAIN_ID, chainOrg, body.fromSeq);
        await recordAudit(tx, event(caller, meta, 'event_destination.replay', row, { chainOrgId: chainOrg, fromSeq: body.fromSeq }));
        tx.afterCommit(deps.wake);
      });
      return { success: true };
    },

    async test(caller: Caller, id: string): Promise<DeliveryResult> {
      const row = await withTenant(db, caller.tenant, (tx) => reachable(tx, caller, id));
      // No transaction is held while the receiver answers.
      return deps.sendTest(row);
    },

    async deliveries(caller: Caller, id: string, query: { page?: number; limit?: number; skipCount?: boolean }): Promise<PaginatedResult<Static<typeof Delivery>>> {
      const page = pageOf(query);
      const { rows, total } = await readTenant(db, caller.tenant, async (tx) => {
        await reachable(tx, caller, id);
        return repo.listDeliveries(tx, id, new Date(deps.now() - DELIVERY_LOG_MS), page.limit, page.offset, page.withTotal);
      });
      return paginated(rows.map((r) => ({
        id: r.id,
        entryId: r.entry_id,
        orgId: r.org_id,
        seq: r.seq === null ? null : Number(r.seq),
        action: r.action,
        attempt: r.attempt,
        outcome: r.outcome,
        responseStatus: r.response_status,
        error: r.error,
        durationMs: r.duration_ms,
        attemptedAt: r.attempted_at.toISOString(),
      })), page, total);
    },
  };
}

export type EventDestinationsService = ReturnType<typeof createEventDestinationsService>;
