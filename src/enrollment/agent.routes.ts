// /agents: enrollment (the enrollment key is the credential) and the heartbeat (agent token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { clientIp } from '../http/client-ip.js';
import { AGENT_BODY_LIMIT, type AgentAuthenticator, type AgentDevice } from './agent-auth.js';
import type { AgentService } from './agent.service.js';
import * as S from './enrollment.schemas.js';

export function agentRoutes(deps: { agents: AgentService; authenticateAgent: AgentAuthenticator; trustProxyHeaders: boolean }): FastifyPluginAsyncTypebox {
  const tags = ['agents'];
  return async (app) => {
    const userAgent = (request: { headers: Record<string, unknown> }) => (typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null);

    app.post('/agents/enroll', {
      bodyLimit: AGENT_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Enroll a device with an enrollment key',
        description: 'No other credential. The device lands in the key’s site, else the given siteId of the key’s organization, else its oldest site, else a new site "Default".',
        body: S.EnrollBody,
        response: { 201: S.Enrolled },
      },
    }, async (request, reply) => {
      reply.status(201);
      return deps.agents.enroll(request.body, clientIp(request, deps.trustProxyHeaders), userAgent(request));
    });

    app.post('/agents/:id/heartbeat', {
      bodyLimit: AGENT_BODY_LIMIT,
      // Authenticated before the body is validated: a stranger learns nothing from validation errors.
      onRequest: async (request) => {
        (request as { agent?: AgentDevice }).agent = await deps.authenticateAgent(request, (request.params as { id: string }).id);
      },
      schema: {
        tags,
        summary: 'Agent heartbeat: marks the device online',
        security: [{ agentToken: [] }],
        params: S.AgentParams,
        body: S.HeartbeatBody,
        response: { 200: S.HeartbeatReply },
      },
    }, (request) => {
      const agent = (request as { agent?: AgentDevice }).agent!;
      return deps.agents.heartbeat(agent, request.body ?? undefined, clientIp(request, deps.trustProxyHeaders), userAgent(request));
    });
  };
}
