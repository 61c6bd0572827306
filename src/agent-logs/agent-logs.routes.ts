// Agent log submission (agent token) and the device log queries (JWT or API key, devices:read).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { callerOf, type Caller } from '../http/auth.js';
import { requestMeta } from '../http/client-ip.js';
import { AGENT_BODY_LIMIT, type AgentAuthenticator, type AgentDevice } from '../enrollment/agent-auth.js';
import type { AgentLogsService } from './agent-logs.service.js';
import * as S from './agent-logs.schemas.js';

export function agentLogsRoutes(deps: {
  agentLogs: AgentLogsService;
  authenticateAgent: AgentAuthenticator;
  devices: { deviceInReach(caller: Caller, id: string): Promise<{ id: string; orgId: string }> };
  trustProxyHeaders: boolean;
}): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt', 'api_key'], permission: 'devices:read' } } as const;
  // The device each agent request speaks for, set by the onRequest hook.
  const agents = new WeakMap<FastifyRequest, AgentDevice>();
  const agentRoute = {
    bodyLimit: AGENT_BODY_LIMIT,
    // Before the body is read and validated: a stranger learns nothing from validation errors.
    onRequest: async (request: FastifyRequest) => {
      agents.set(request, await deps.authenticateAgent(request, (request.params as { id: string }).id));
    },
  };
  const agentOf = (request: FastifyRequest): AgentDevice => {
    const agent = agents.get(request);
    if (!agent) throw new Error('agent route without agent authentication');
    return agent;
  };

  return async (app) => {
    app.post('/agents/:id/logs', {
      ...agentRoute,
      schema: {
        tags: ['agents'],
        summary: 'Submit agent diagnostic logs (1-500 entries, all stored or none)',
        security: [{ agentToken: [] }],
        params: S.AgentParams,
        body: S.DiagnosticLogsBody,
        response: { 201: S.DiagnosticLogsReceived },
      },
    }, async (request, reply) => {
      const result = await deps.agentLogs.submitDiagnosticLogs(agentOf(request), request.body.logs);
      reply.status(201);
      return result;
    });

    app.put('/agents/:id/eventlogs', {
      ...agentRoute,
      schema: {
        tags: ['agents'],
        summary: 'Submit device event logs (up to 1000); duplicates of (source, eventId) are skipped and not counted',
        security: [{ agentToken: [] }],
        params: S.AgentParams,
        body: S.EventLogsBody,
        response: { 200: S.EventLogsAccepted },
      },
    }, (request) => deps.agentLogs.submitEventLogs(agentOf(request), request.body.events, requestMeta(request, deps.trustProxyHeaders)));

    app.get('/devices/:id/diagnostic-logs', {
      config: read,
      schema: {
        tags: ['devices'],
        summary: 'Diagnostic logs of a device, newest first',
        params: S.IdParams,
        querystring: S.DiagnosticLogQuery,
        response: { 200: S.DiagnosticLogList },
      },
    }, async (request) => {
      const caller = callerOf(request);
      const device = await deps.devices.deviceInReach(caller, request.params.id);
      return deps.agentLogs.listDiagnosticLogs(caller, device, request.query);
    });

    app.get('/devices/:id/eventlogs', {
      config: read,
      schema: {
        tags: ['devices'],
        summary: 'Stored event logs of a device, newest first',
        params: S.IdParams,
        querystring: S.EventLogQuery,
        response: { 200: S.EventLogList },
      },
    }, async (request) => {
      const caller = callerOf(request);
      const device = await deps.devices.deviceInReach(caller, request.params.id);
      return deps.agentLogs.listEventLogs(caller, device, request.query);
    });
  };
}
