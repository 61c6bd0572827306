// The audit screens' state lives in the URL query (ui/list-query.ts), so a reload or a shared link
// shows the same view: `user`, `action`, `resource`, `from`, `to` (ISO 8601), `orgId` (an organization
// id or `platform`), `q` (full-text search; its presence selects /search over /logs) and `page`.
import type { Ok } from '../../api/types';

export type LogEntry = Ok<'/api/v1/audit-logs/logs/{id}', 'get'>;
export type ChainReport = Ok<'/api/v1/audit-logs/verify', 'get'>;
export type { Organization } from '../../api/directory';

/** '' means not set. `orgId` '' is every organization the caller reaches; `q` '' is the plain list. */
export const AUDIT_KEYS = ['q', 'user', 'action', 'resource', 'from', 'to', 'orgId'] as const;
export type AuditQuery = Record<(typeof AUDIT_KEYS)[number], string>;

/** The address's values without the spaces a hand-edited link may carry. */
export function trimmed(filters: AuditQuery): AuditQuery {
  return Object.fromEntries(AUDIT_KEYS.map((k) => [k, filters[k].trim()])) as AuditQuery;
}

/** The filters the API's list, search and export endpoints share. */
export type Filters = { user?: string; action?: string; resource?: string; from?: string; to?: string; orgId?: string };

/** The filters of a view, without empty values; `orgId` only for callers that may name one. */
export function apiFilters(query: AuditQuery, withOrg: boolean): Filters {
  const out: Filters = {};
  for (const name of ['user', 'action', 'resource', 'from', 'to'] as const) if (query[name]) out[name] = query[name];
  if (withOrg && query.orgId) out.orgId = query.orgId;
  return out;
}
