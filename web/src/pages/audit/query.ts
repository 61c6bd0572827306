// The audit screens' state lives in the URL query, so a reload or a shared link shows the same view:
// `user`, `action`, `resource`, `from`, `to` (ISO 8601), `orgId` (an organization id or `platform`),
// `q` (full-text search; its presence selects /search over /logs) and `page`.
import type { Ok } from '../../api/types';

export type LogEntry = Ok<'/api/v1/audit-logs/logs/{id}', 'get'>;
export type ChainReport = Ok<'/api/v1/audit-logs/verify', 'get'>;
export type { Organization } from '../../api/directory';
export { isoToLocalInput } from '../../ui/format';

export interface AuditQuery {
  user: string;
  action: string;
  resource: string;
  /** ISO 8601, or '' */
  from: string;
  /** ISO 8601, or '' */
  to: string;
  /** '' = every organization the caller reaches; 'platform' = the platform chain (system scope) */
  orgId: string;
  /** '' = no search: the plain list */
  q: string;
  page: number;
}

export const PAGE_SIZE = 50;

export function readQuery(params: URLSearchParams): AuditQuery {
  const text = (name: string) => params.get(name)?.trim() ?? '';
  const page = Number(params.get('page'));
  return {
    user: text('user'),
    action: text('action'),
    resource: text('resource'),
    from: text('from'),
    to: text('to'),
    orgId: text('orgId'),
    q: text('q'),
    page: Number.isInteger(page) && page > 1 ? page : 1,
  };
}

/** The URL query for a view; empty values and page 1 are left out so links stay short. */
export function writeQuery(query: AuditQuery): URLSearchParams {
  const params = new URLSearchParams();
  for (const name of ['q', 'user', 'action', 'resource', 'from', 'to', 'orgId'] as const) {
    if (query[name]) params.set(name, query[name]);
  }
  if (query.page > 1) params.set('page', String(query.page));
  return params;
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

