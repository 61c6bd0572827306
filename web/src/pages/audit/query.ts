// The audit screens' state lives in the URL query, so a reload, the back button or a shared link
// shows the same view: `q` (full-text search; its presence selects /search over /logs), `action`,
// `user`, `resource`, `from`, `to` (ISO 8601), `orgId` (an organization id or `platform`) and `page`.
// The address is the source of truth: the form is filled from it, and a submission writes a fresh
// query holding only the non-empty values (a cleared box leaves the address, nothing stale stays).
import { useSearchParams } from 'react-router';
import type { Ok } from '../../api/types';

export type LogEntry = Ok<'/api/v1/audit-logs/logs/{id}', 'get'>;
export type ChainReport = Ok<'/api/v1/audit-logs/verify', 'get'>;
export type { Organization } from '../../api/directory';

/** '' means not set. `orgId` '' is every organization the caller reaches; `q` '' is the plain list. */
export const AUDIT_KEYS = ['q', 'action', 'user', 'resource', 'from', 'to', 'orgId'] as const;
export type AuditKey = (typeof AUDIT_KEYS)[number];
export type AuditQuery = Record<AuditKey, string>;

export const EMPTY_QUERY: AuditQuery = { q: '', action: '', user: '', resource: '', from: '', to: '', orgId: '' };

/** The values without the spaces a hand-edited link or a form box may carry. */
export function trimmed(filters: AuditQuery): AuditQuery {
  return Object.fromEntries(AUDIT_KEYS.map((k) => [k, (filters[k] ?? '').trim()])) as AuditQuery;
}

/** True when any value, the organization included, narrows the view. */
export function isFiltered(query: AuditQuery): boolean {
  return AUDIT_KEYS.some((k) => query[k] !== '');
}

/** The address query of a view: only the non-empty values, in a fixed order; page 1 is left out. */
export function toSearchParams(query: AuditQuery, page = 1): URLSearchParams {
  const out = new URLSearchParams();
  const clean = trimmed(query);
  for (const k of AUDIT_KEYS) if (clean[k]) out.set(k, clean[k]);
  if (page > 1) out.set('page', String(page));
  return out;
}

/** The view the address names. */
export function fromSearchParams(params: URLSearchParams): { query: AuditQuery; page: number } {
  const query = trimmed(Object.fromEntries(AUDIT_KEYS.map((k) => [k, params.get(k) ?? ''])) as AuditQuery);
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '', 10) || 1);
  return { query, page };
}

export interface AuditLocation {
  query: AuditQuery;
  page: number;
  /** Changes exactly when a value of the query does (not the page): the form's identity. */
  queryKey: string;
  /** Changes when the query or the page does: the dependency of the entries' load. */
  key: string;
  /** Writes a whole new query (first page); false when the address already says exactly that. */
  apply(query: AuditQuery): boolean;
  setPage(page: number): void;
}

export function useAuditLocation(): AuditLocation {
  const [params, setParams] = useSearchParams();
  const { query, page } = fromSearchParams(params);
  const queryKey = AUDIT_KEYS.map((k) => query[k]).join('\u0000');
  return {
    query,
    page,
    queryKey,
    key: `${page}\u0000${queryKey}`,
    apply(next) {
      const target = toSearchParams(next);
      if (target.toString() === params.toString()) return false;
      setParams(target);
      return true;
    },
    setPage: (next) => setParams(toSearchParams(query, next)),
  };
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
