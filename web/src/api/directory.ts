// Names for the ids the API hands out: the organizations a user reaches (one unpaginated list) and
// the sites of one organization (every page), for filters, pickers and columns.
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
