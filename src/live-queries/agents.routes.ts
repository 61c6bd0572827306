// /agents served by the live-queries module: the agent's WebSocket (API.md §7), over which live
// event-log queries reach the device. The agent credential is checked before the upgrade, so a
// refused agent gets an HTTP 404/401.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type {} from '@fastify/websocket';
import { agentOf } from '../http/auth.js';
import { AgentParams } from '../http/common-schemas.js';
import type { AgentGateway } from './gateway.js';

export function agentSocketRoutes(deps: { gateway: AgentGateway }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/agents/:id/ws', {
      websocket: true,
      config: { auth: { via: ['agent'] } },
      schema: { operationId: 'connectAgentSocket', tags: ['agents'], summary: 'The agent’s WebSocket (live queries); authenticated before the upgrade', params: AgentParams },
    }, (socket, request) => {
      const device = agentOf(request);
      deps.gateway.attach({ deviceId: device.deviceId, agentId: device.agentId, orgId: device.orgId }, socket);
    });
  };
}
