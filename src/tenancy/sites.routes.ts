// /orgs/sites: organization, partner and system scope, with the site access check.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { SitesService } from './sites.service.js';
import * as S from './schemas.js';

export function sitesRoutes(deps: { sites: SitesService }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt'], permission: 'organizations:read' } } as const;
  const write = { auth: { via: ['jwt'], permission: 'organizations:write' } } as const;
  const tags = ['sites'];
  return async (app) => {

    app.get('/sites', {
      config: read,
      schema: { operationId: 'listSites', tags, summary: 'Sites of one organization (orgId or organizationId), else of every reachable one', querystring: S.SiteListQuery, response: { 200: S.SiteList } },
    }, (request) => deps.sites.list(callerOf(request), request.query));

    app.post('/sites', {
      config: write,
      schema: { operationId: 'createSite', tags, summary: 'Create a site (timezone defaults to UTC)', body: S.CreateSiteBody, response: { 201: S.Site } },
    }, async (request, reply) => {
      reply.status(201);
      return deps.sites.create(callerOf(request), request.body, request.meta);
    });

    app.get('/sites/:id', {
      config: read,
      schema: { operationId: 'getSite', tags, summary: 'One site', params: S.IdParams, response: { 200: S.Site } },
    }, (request) => deps.sites.get(callerOf(request), request.params.id));

    app.patch('/sites/:id', {
      config: write,
      schema: { operationId: 'updateSite', tags, summary: 'Update a site (not its organization)', params: S.IdParams, body: S.UpdateSiteBody, response: { 200: S.Site } },
    }, (request) => deps.sites.update(callerOf(request), request.params.id, request.body, request.meta));

    app.delete('/sites/:id', {
      config: write,
      schema: { operationId: 'deleteSite', tags, summary: 'Delete a site permanently', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => deps.sites.remove(callerOf(request), request.params.id, request.meta));
  };
}
