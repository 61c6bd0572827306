// The security-events and compliance reports (SPEC "Events", API.md §8): counts by action, result, actor
// and UTC day over every row of a date range, computed in SQL, scoped like /logs.
import type { Database } from '../db/database.js';
import { withTenant } from '../db/tenant-scope.js';
import { AppError, reversedRange } from '../errors.js';
import type { Caller } from '../http/auth.js';
import * as repo from './reports.repo.js';
import { chainsFor } from './audit.service.js';
import { COMPLIANCE_ACTIONS, SECURITY_EVENT_ACTIONS, type AuditAction } from './actions.js';

export type ReportKind = 'security-events' | 'compliance';
const ACTIONS: Record<ReportKind, readonly AuditAction[]> = { 'security-events': SECURITY_EVENT_ACTIONS, compliance: COMPLIANCE_ACTIONS };

const DEFAULT_RANGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface AuditReport {
  from: string;
  to: string;
  total: number;
  byAction: { action: AuditAction; count: number }[];
  byResult: { success: number; failure: number; denied: number };
  byActor: { actorId: string | null; actorEmail: string | null; count: number }[];
  byDay: { day: string; count: number }[];
}

/** `to` defaults to now, `from` to 30 days before `to`; both bounds are inclusive. */
function rangeOf(query: { from?: string; to?: string }, now: number): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : new Date(now);
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_RANGE_MS);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) throw new AppError('VALIDATION_FAILED', 'from and to must be ISO 8601 date-times');
  if (from > to) throw reversedRange('from', 'to');
  return { from, to };
}

function byCountThen<T>(key: (item: T) => string) {
  return (a: T & { count: number }, b: T & { count: number }) => b.count - a.count || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}

export function createAuditReportsService(deps: { db: Database; now: () => number }) {
  async function report(kind: ReportKind, caller: Caller, query: { from?: string; to?: string; orgId?: string }): Promise<AuditReport> {
    const { from, to } = rangeOf(query, deps.now());
    const result: AuditReport = {
      from: from.toISOString(),
      to: to.toISOString(),
      total: 0,
      byAction: [],
      byResult: { success: 0, failure: 0, denied: 0 },
      byActor: [],
      byDay: [],
    };
    const chains = chainsFor(caller, query.orgId);
    if (!chains) return result;
    const groups = await withTenant(deps.db, caller.tenant, (tx) => repo.reportGroups(tx, { ...chains, from, to, actions: ACTIONS[kind] }));
    for (const g of groups) {
      if (g.dimension === 'action') result.byAction.push({ action: g.action!, count: g.count });
      else if (g.dimension === 'day') result.byDay.push({ day: g.day!, count: g.count });
      else if (g.dimension === 'actor') result.byActor.push({ actorId: g.actor_id, actorEmail: g.actor_email, count: g.count });
      else {
        result.byResult[g.result as keyof AuditReport['byResult']] = g.count;
        result.total += g.count;
      }
    }
    result.byAction.sort(byCountThen((a) => a.action));
    result.byActor.sort(byCountThen((a) => `${a.actorEmail ?? ''}\n${a.actorId ?? ''}`));
    result.byDay.sort((a, b) => (a.day < b.day ? -1 : 1));
    return result;
  }

  return {
    securityEvents: (caller: Caller, query: { from?: string; to?: string; orgId?: string }) => report('security-events', caller, query),
    compliance: (caller: Caller, query: { from?: string; to?: string; orgId?: string }) => report('compliance', caller, query),
  };
}

export type AuditReportsService = ReturnType<typeof createAuditReportsService>;
