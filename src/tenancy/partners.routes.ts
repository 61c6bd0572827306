// /orgs/partners: system-scope partner administration, and /orgs/partners/me for partner users.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { PartnersService } from './partners.service.js';
import * as S from './schemas.js';

export function partnersRoutes(deps: { partners: PartnersService }): FastifyPluginAsyncTypebox {
  const system = (permission: string) => ({ auth: { via: ['jwt'], scopes: ['system'], permission } as const });
  const partner = (permission: string) => ({ auth: { via: ['jwt'], scopes: ['partner'], permission } as const });
  const tags = ['partners'];
  return async (app) => {

    app.get('/partners', {
      config: system('organizations:read'),
      schema: { operationId: 'listPartners', tags, summary: 'Partners (system scope)', querystring: S.ListQuery, response: { 200: S.PartnerList } },
    }, (request) => deps.partners.list(callerOf(request), request.query));

    app.post('/partners', {
      config: system('organizations:write'),
      schema: { operationId: 'createPartner', tags, summary: 'Provision a partner (active unless status says otherwise)', body: S.CreatePartnerBody, response: { 201: S.Partner } },
    }, async (request, reply) => {
      reply.status(201);
      return deps.partners.create(callerOf(request), request.body, request.meta);
    });

    app.get('/partners/me', {
      config: partner('organizations:read'),
      schema: { operationId: 'getOwnPartner', tags, summary: 'The caller’s partner', response: { 200: S.Partner } },
    }, (request) => deps.partners.getMine(callerOf(request)));

    app.patch('/partners/me', {
      config: partner('organizations:write'),
      schema: { operationId: 'updateOwnPartner', tags, summary: 'Update the caller’s partner (settings merged key by key)', body: S.UpdateMyPartnerBody, response: { 200: S.Partner } },
    }, (request) => deps.partners.updateMine(callerOf(request), request.body, request.meta));

    app.get('/partners/:id', {
      config: system('organizations:read'),
      schema: { operationId: 'getPartner', tags, summary: 'One partner', params: S.IdParams, response: { 200: S.Partner } },
    }, (request) => deps.partners.get(callerOf(request), request.params.id));

    app.patch('/partners/:id', {
      config: system('organizations:write'),
      schema: { operationId: 'updatePartner', tags, summary: 'Update a partner', params: S.IdParams, body: S.UpdatePartnerBody, response: { 200: S.Partner } },
    }, (request) => deps.partners.update(callerOf(request), request.params.id, request.body, request.meta));

    app.delete('/partners/:id', {
      config: system('organizations:write'),
      schema: { operationId: 'deletePartner', tags, summary: 'Soft-delete a partner', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => deps.partners.remove(callerOf(request), request.params.id, request.meta));
  };
}
