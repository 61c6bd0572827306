// Lists the tenancy screens need whole: partners for a system user's choices, and every organization
// the caller reaches (GET /orgs, unpaginated, in the partner's saved order) for names and filters.
import { api, call } from '../../api/client';
import { loadOrganizations } from '../../api/directory';
import { useLoad, type Loaded } from '../../ui/use-load';
import type { Organization, Partner } from './resources';

/** Pages of 100 are read until the end, at most this many (10,000 partners). */
const MAX_PAGES = 100;

export async function loadAllPartners(): Promise<Partner[]> {
  const all: Partner[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const body = await call(api.GET('/api/v1/orgs/partners', { params: { query: { page, limit: 100 } } }));
    all.push(...body.data);
    if (body.data.length === 0 || page >= (body.pagination.totalPages ?? page)) break;
  }
  return all.sort((a, b) => a.name.localeCompare(b.name));
}

/** A partner's organizations in its display order (system scope), read page by page to the end. */
export async function loadPartnerOrganizations(partnerId: string): Promise<Organization[]> {
  const all: Organization[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const body = await call(api.GET('/api/v1/orgs/organizations', { params: { query: { partnerId, page, limit: 100 } } }));
    all.push(...body.data);
    if (body.data.length === 0 || page >= (body.pagination.totalPages ?? page)) break;
  }
  return all;
}

/** Every live partner (system scope only; `enabled` false skips the request). */
export function usePartnerOptions(enabled: boolean): Loaded<Partner[]> {
  return useLoad(async () => (enabled ? loadAllPartners() : []), [enabled]);
}

/** Every organization the caller reaches, in the order GET /orgs gives. */
export function useAccessibleOrganizations(): Loaded<Organization[]> {
  return useLoad(loadOrganizations, []);
}

export function namesById<T extends { id: string; name: string }>(items: T[] | undefined): Map<string, string> {
  return new Map((items ?? []).map((item) => [item.id, item.name]));
}
