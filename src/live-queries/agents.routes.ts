// /agents served by the live-queries module: the agent's WebSocket (API.md §7), over which live
// event-log queries reach the device. The agent credential is checked before the upgrade, so a
// refused agent gets an HTTP 404/401.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type {} from '@fastify/websocket';
import { AppError } from '../errors.js';
import { agentOf } from '../http/auth.js';
import { AgentParams } from '../http/common-schemas.js';
import type { AgentGateway } from './gateway.js';

export function agentSocketRoutes(deps: { gateway: AgentGateway }): FastifyPluginAsyncTypebox {
  return async (app) => {
    // A route with both handlers (not `websocket: true`, which the plugin hides from the OpenAPI
    // document and answers a plain GET with an empty 404): the upgrade goes to wsHandler, a plain
    // GET from an authenticated agent hears 426 as a problem.
    app.route({
      method: 'GET',
      url: '/agents/:id/ws',
      config: { auth: { via: ['agent'] } },
      schema: {
        operationId: 'connectAgentSocket',
        tags: ['agents'],
        summary: 'The agent’s WebSocket (live queries); authenticated before the upgrade',
        description: 'GET with Upgrade: websocket. Server commands and agent command_result messages as API.md §7 describes; a GET without the upgrade is 426.',
        params: AgentParams,
        response: { 101: { description: 'Switching Protocols: the WebSocket is open' } },
      },
      handler: async (_request, reply) => {
        reply.header('upgrade', 'websocket');
        throw new AppError('UPGRADE_REQUIRED', 'This is the agent’s WebSocket: connect with Upgrade: websocket');
      },
      wsHandler: (socket, request) => {
        const device = agentOf(request);
        deps.gateway.attach({ deviceId: device.deviceId, agentId: device.agentId, orgId: device.orgId }, socket);
      },
    });
  };
}
