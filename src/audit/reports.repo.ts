// SQL for the audit reports (API.md §8): counts over every row of a date range, in one pass.
import type { Queryable } from '../db/database.js';
import type { AuditAction } from './actions.js';
import { VALUE_DEPENDENT_PLAN } from './audit.repo.js';

export interface ReportFilter {
  /** null: every chain the transaction's scope reaches. */
  orgIds: readonly string[] | null;
  platformOnly: boolean;
  from: Date;
  to: Date;
  actions: readonly AuditAction[];
}

export interface ReportGroupRow {
  dimension: 'action' | 'result' | 'actor' | 'day';
  /** One of the filter's actions: the match is exact. */
  action: AuditAction | null;
  result: string | null;
  actor_id: string | null;
  actor_email: string | null;
  day: string | null;
  count: number;
}

/**
 * Every group of the report from one scan of the range: GROUPING SETS aggregates by action, result,
 * actor and UTC day together. The scan is an index range on (org_id, timestamp) for tenant callers
 * and on (timestamp) for system scope; the action list is a filter on that range.
 */
export async function reportGroups(tx: Queryable, filter: ReportFilter): Promise<ReportGroupRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (value: unknown) => `$${params.push(value)}`;
  if (filter.platformOnly) where.push('a.org_id is null');
  else if (filter.orgIds !== null) where.push(`a.org_id = any(${add(filter.orgIds)}::uuid[])`);
  where.push(`a.timestamp >= ${add(filter.from)}`, `a.timestamp <= ${add(filter.to)}`, `a.action = any(${add(filter.actions)}::text[])`);
  const { rows } = await tx.query<ReportGroupRow>(
    `with hits as (
       select a.action, a.result, a.actor_id, a.actor_email,
              to_char(a.timestamp at time zone 'UTC', 'YYYY-MM-DD') as day
         from audit_entries a
        where ${where.join(' and ')}
     )
     select case when grouping(action) = 0 then 'action'
                 when grouping(result) = 0 then 'result'
                 when grouping(day) = 0 then 'day'
                 else 'actor' end as dimension,
            action, result, actor_id, actor_email, day, count(*)::int as count
       from hits
      group by grouping sets ((action), (result), (actor_id, actor_email), (day))`,
    params,
    VALUE_DEPENDENT_PLAN,
  );
  return rows;
}
