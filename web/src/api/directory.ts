// Names for the ids the API hands out: the organizations a user reaches (one unpaginated list), the
// partners in reach, and the sites of one organization (every page), for filters, pickers and columns.
import { api, call } from './client';
import type { Ok } from './types';

export type Organization = Ok<'/api/v1/orgs', 'get'>['data'][number];
export type Site = Ok<'/api/v1/orgs/sites', 'get'>['data'][number];

export async function loadOrganizations(): Promise<Organization[]> {
  return (await call(api.GET('/api/v1/orgs'))).data;
}

/** Every site of one organization, page by page (100 is the largest page). */
export async function loadSitesOf(orgId: string): Promise<Site[]> {
  const sites: Site[] = [];
  for (let page = 1; ; page++) {
    const body = await call(api.GET('/api/v1/orgs/sites', { params: { query: { orgId, page, limit: 100 } } }));
    sites.push(...body.data);
    if (body.data.length < 100 || page >= (body.pagination.totalPages ?? page)) return sites;
  }
}

/** Sites of several organizations, by id. */
export async function loadSitesOfMany(orgIds: readonly string[]): Promise<Map<string, Site>> {
  const lists = await Promise.all([...new Set(orgIds)].map(loadSitesOf));
  return new Map(lists.flat().map((site) => [site.id, site]));
}

export async function loadSite(id: string): Promise<Site> {
  return call(api.GET('/api/v1/orgs/sites/{id}', { params: { path: { id } } }));
}

export type Partner = Ok<'/api/v1/orgs/partners/me', 'get'>;

/**
 * The partners whose names a screen shows: every live one for system scope (pages of 100, at most
 * 10,000), the caller's own for partner scope, none for organization scope.
 */
export async function loadPartnersInReach(scope: 'system' | 'partner' | 'organization'): Promise<Partner[]> {
  if (scope === 'partner') return [await call(api.GET('/api/v1/orgs/partners/me'))];
  if (scope !== 'system') return [];
  const partners: Partner[] = [];
  for (let page = 1; page <= 100; page++) {
    const body = await call(api.GET('/api/v1/orgs/partners', { params: { query: { page, limit: 100 } } }));
    partners.push(...body.data);
    if (body.data.length < 100 || page >= (body.pagination.totalPages ?? page)) break;
  }
  return partners.sort((a, b) => a.name.localeCompare(b.name));
}
