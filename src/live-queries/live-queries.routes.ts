// The agent socket (GET /agents/:id/ws) and the live event-log routes, under
// /system-tools/devices/:deviceId/eventlogs… and /devices/:deviceId/live/eventlogs… (API.md §7).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type {} from '@fastify/websocket';
import { callerOf } from '../http/auth.js';
import { requestMeta } from '../http/client-ip.js';
import type { AgentAuthenticator, AgentDevice } from '../enrollment/agent-auth.js';
import type { AgentGateway } from './gateway.js';
import type { LiveQueriesService } from './live-queries.service.js';
import * as S from './live-queries.schemas.js';
import { AgentParams } from '../enrollment/enrollment.schemas.js';

const LIVE_PREFIXES = ['/system-tools/devices/:deviceId/eventlogs', '/devices/:deviceId/live/eventlogs'] as const;

export function liveQueriesRoutes(deps: { live: LiveQueriesService; gateway: AgentGateway; authenticateAgent: AgentAuthenticator; trustProxyHeaders: boolean }): FastifyPluginAsyncTypebox {
  const config = { auth: { via: ['jwt', 'api_key'], permission: 'devices:read' } } as const;
  const tags = ['live-queries'];
  return async (app) => {
    const meta = (request: Parameters<typeof requestMeta>[0]) => requestMeta(request, deps.trustProxyHeaders);

    app.get('/agents/:id/ws', {
      websocket: true,
      schema: { tags: ['agents'], summary: 'The agent’s WebSocket (live queries); authenticated before the upgrade', params: AgentParams, security: [{ agentToken: [] }] },
      // The token is checked before the upgrade completes: a refused agent gets an HTTP 404/401.
      onRequest: async (request) => {
        (request as { agentDevice?: AgentDevice }).agentDevice = await deps.authenticateAgent(request, (request.params as { id: string }).id);
      },
    }, (socket, request) => {
      const device = (request as { agentDevice?: AgentDevice }).agentDevice!;
      deps.gateway.attach({ deviceId: device.deviceId, agentId: device.agentId }, socket);
    });

    for (const prefix of LIVE_PREFIXES) {
      app.get(prefix, {
        config,
        schema: { tags, summary: 'The device’s event logs, asked live through its agent', params: S.DeviceParams, response: { 200: S.DescriptorList } },
      }, (request) => deps.live.listLogs(callerOf(request), request.params.deviceId, meta(request)));

      app.get(`${prefix}/:name`, {
        config,
        schema: { tags, summary: 'One event log of the device (name matched case-insensitively)', params: S.LogParams, response: { 200: S.OneDescriptor } },
      }, (request) => deps.live.getLog(callerOf(request), request.params.deviceId, request.params.name, meta(request)));

      app.get(`${prefix}/:name/events`, {
        config,
        schema: { tags, summary: 'Events of one log, newest first, filtered and paged on the device', params: S.LogParams, querystring: S.EventsQuery, response: { 200: S.EntryPage } },
      }, (request) => deps.live.queryEvents(callerOf(request), request.params.deviceId, request.params.name, request.query, meta(request)));

      app.get(`${prefix}/:name/events/:recordId`, {
        config,
        schema: { tags, summary: 'One event record', params: S.RecordParams, response: { 200: S.OneEntry } },
      }, (request) => deps.live.getRecord(callerOf(request), request.params.deviceId, request.params.name, request.params.recordId, meta(request)));
    }
  };
}
