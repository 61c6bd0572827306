// /orgs/ and /orgs/organizations (SPEC permission matrix: partner and system; `/` also organization).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { OrganizationsService } from './organizations.service.js';
import * as S from './schemas.js';

export function organizationsRoutes(deps: { organizations: OrganizationsService }): FastifyPluginAsyncTypebox {
  const auth = (permission: string, scopes: ('system' | 'partner' | 'organization')[] = ['partner', 'system']) =>
    ({ auth: { via: ['jwt'], scopes, permission } as const });
  const tags = ['organizations'];
  return async (app) => {

    app.get('/', {
      config: auth('organizations:read', ['organization', 'partner', 'system']),
      schema: { operationId: 'listAccessibleOrganizations', tags, summary: 'Every organization the caller reaches (unpaginated; partner order, else by name)', response: { 200: S.AccessibleOrganizations } },
    }, (request) => deps.organizations.accessible(callerOf(request)));

    app.get('/organizations', {
      config: auth('organizations:read'),
      schema: { operationId: 'listOrganizations', tags, summary: 'Organizations, paginated', querystring: S.OrganizationListQuery, response: { 200: S.OrganizationList } },
    }, (request) => deps.organizations.list(callerOf(request), request.query));

    app.post('/organizations', {
      config: auth('organizations:write'),
      schema: { operationId: 'createOrganization', tags, summary: 'Create an organization', body: S.CreateOrganizationBody, response: { 201: S.Organization } },
    }, async (request, reply) => {
      reply.status(201);
      return deps.organizations.create(callerOf(request), request.body, request.meta);
    });

    app.patch('/organizations/order', {
      config: auth('organizations:write', ['partner', 'system']),
      schema: {
        operationId: 'reorderOrganizations',
        tags,
        summary: 'Set the partner’s display order of its organizations',
        description: 'Unknown or deleted ids are dropped; reachable organizations left out follow in registration order. '
          + 'A caller reaching only some of the partner’s organizations reorders those only: they take the slots they occupy '
          + 'in the current display order, in the new order, and every other organization keeps its slot. '
          + 'The answer lists only the organizations the caller reaches. '
          + 'A system-scope caller names the partner with partnerId (without it: 403 PERMISSION_DENIED; an unknown partner: 404).',
        body: S.OrganizationOrderBody,
        response: { 200: S.OrganizationOrder },
      },
    }, (request) => deps.organizations.setOrder(callerOf(request), request.body.organizationOrder, request.body.partnerId));

    app.get('/organizations/:id', {
      config: auth('organizations:read'),
      schema: { operationId: 'getOrganization', tags, summary: 'One organization', params: S.IdParams, response: { 200: S.Organization } },
    }, (request) => deps.organizations.get(callerOf(request), request.params.id));

    app.patch('/organizations/:id', {
      config: auth('organizations:write'),
      schema: { operationId: 'updateOrganization', tags, summary: 'Update an organization (not its partner)', params: S.IdParams, body: S.UpdateOrganizationBody, response: { 200: S.Organization } },
    }, (request) => deps.organizations.update(callerOf(request), request.params.id, request.body, request.meta));

    app.delete('/organizations/:id', {
      config: auth('organizations:write'),
      schema: { operationId: 'deleteOrganization', tags, summary: 'Soft-delete an organization (its sites are kept but no longer reachable)', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => deps.organizations.remove(callerOf(request), request.params.id, request.meta));
  };
}
