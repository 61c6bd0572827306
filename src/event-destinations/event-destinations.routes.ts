// /event-destinations (JWT only: API.md §9).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { EventDestinationsService } from './event-destinations.service.js';
import * as S from './event-destinations.schemas.js';

export function eventDestinationsRoutes(deps: { eventDestinations: EventDestinationsService }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt'], permission: 'organizations:read' } } as const;
  const write = { auth: { via: ['jwt'], permission: 'organizations:write', mfa: true } } as const;
  const tags = ['event-destinations'];
  const service = deps.eventDestinations;
  return async (app) => {
    app.get('/event-destinations', {
      config: read,
      schema: { operationId: 'listEventDestinations', tags, summary: 'Webhook and syslog destinations within reach (newest first)', querystring: S.DestinationListQuery, response: { 200: S.DestinationList } },
    }, (request) => service.list(callerOf(request), request.query));

    app.post('/event-destinations', {
      config: write,
      schema: {
        operationId: 'createEventDestination',
        tags,
        summary: 'Create a destination for one organization (orgId), a whole partner (partnerId) or, system scope only, the platform (neither); a webhook’s secret is in this response only',
        body: S.CreateDestinationBody,
        response: { 201: S.DestinationWithSecret },
      },
    }, async (request, reply) => {
      reply.status(201);
      return service.create(callerOf(request), request.body, request.meta);
    });

    app.get('/event-destinations/:id', {
      config: read,
      schema: { operationId: 'getEventDestination', tags, summary: 'One destination', params: S.IdParams, response: { 200: S.Destination } },
    }, (request) => service.get(callerOf(request), request.params.id));

    app.patch('/event-destinations/:id', {
      config: write,
      schema: { operationId: 'updateEventDestination', tags, summary: 'Change name, url, filter (replaced whole), caCertificate or enabled', params: S.IdParams, body: S.UpdateDestinationBody, response: { 200: S.Destination } },
    }, (request) => service.update(callerOf(request), request.params.id, request.body, request.meta));

    app.delete('/event-destinations/:id', {
      config: write,
      schema: { operationId: 'deleteEventDestination', tags, summary: 'Delete a destination and its delivery log', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => service.remove(callerOf(request), request.params.id, request.meta));

    app.post('/event-destinations/:id/rotate-secret', {
      config: write,
      schema: { operationId: 'rotateEventDestinationSecret', tags, summary: 'New webhook signing secret; the old one also signs for 24 hours', params: S.IdParams, response: { 200: S.Secret } },
    }, (request) => service.rotateSecret(callerOf(request), request.params.id, request.meta));

    app.post('/event-destinations/:id/test', {
      config: write,
      schema: { operationId: 'testEventDestination', tags, summary: 'Send one unchained destination.test event now and report how it went', params: S.IdParams, response: { 200: S.TestResult } },
    }, (request) => service.test(callerOf(request), request.params.id));

    app.post('/event-destinations/:id/replay', {
      config: write,
      schema: { operationId: 'replayEventDestination', tags, summary: 'Send a chain again from fromSeq, in order, before newer entries of it', params: S.IdParams, body: S.ReplayBody, response: { 202: S.Success } },
    }, async (request, reply) => {
      reply.status(202);
      return service.replay(callerOf(request), request.params.id, request.body, request.meta);
    });

    app.get('/event-destinations/:id/deliveries', {
      config: read,
      schema: { operationId: 'listEventDeliveries', tags, summary: 'Delivery attempts of the last 7 days, newest first', params: S.IdParams, querystring: S.DeliveryListQuery, response: { 200: S.DeliveryList } },
    }, (request) => service.deliveries(callerOf(request), request.params.id, request.query));
  };
}
