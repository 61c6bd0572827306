// The live event-log routes under /system-tools/devices/:deviceId/eventlogs… and the same
// operations under /devices/:deviceId/live/eventlogs… (API.md §7). The service checks reach.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { LiveQueriesService } from './live-queries.service.js';
import * as S from './live-queries.schemas.js';

// The same four operations in both namespaces; `name` keeps their operationIds apart.
const NAMESPACES = [
  { prefix: '/system-tools/devices/:deviceId/eventlogs', name: 'SystemTools' },
  { prefix: '/devices/:deviceId/live/eventlogs', name: 'DeviceLive' },
] as const;

export function systemToolsRoutes(deps: { live: LiveQueriesService }): FastifyPluginAsyncTypebox {
  const config = { auth: { via: ['jwt', 'api_key'], permission: 'devices:read' } } as const;
  const tags = ['live-queries'];
  return async (app) => {
    for (const { prefix, name } of NAMESPACES) {
      app.get(prefix, {
        config,
        schema: { operationId: `list${name}EventLogs`, tags, summary: 'The device’s event logs, asked live through its agent', params: S.DeviceParams, response: { 200: S.DescriptorList } },
      }, (request) => deps.live.listLogs(callerOf(request), request.params.deviceId, request.meta));

      app.get(`${prefix}/:name`, {
        config,
        schema: { operationId: `get${name}EventLog`, tags, summary: 'One event log of the device (name matched case-insensitively)', params: S.LogParams, response: { 200: S.OneDescriptor } },
      }, (request) => deps.live.getLog(callerOf(request), request.params.deviceId, request.params.name, request.meta));

      app.get(`${prefix}/:name/events`, {
        config,
        schema: { operationId: `query${name}Events`, tags, summary: 'Events of one log, newest first, filtered and paged on the device', params: S.LogParams, querystring: S.EventsQuery, response: { 200: S.EntryPage } },
      }, (request) => deps.live.queryEvents(callerOf(request), request.params.deviceId, request.params.name, request.query, request.meta));

      app.get(`${prefix}/:name/events/:recordId`, {
        config,
        schema: { operationId: `get${name}EventRecord`, tags, summary: 'One event record', params: S.RecordParams, response: { 200: S.OneEntry } },
      }, (request) => deps.live.getRecord(callerOf(request), request.params.deviceId, request.params.name, request.params.recordId, request.meta));
    }
  };
}
