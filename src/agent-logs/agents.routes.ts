// /agents served by the agent-logs module: diagnostic and event log submission (agent credential).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { agentOf } from '../http/auth.js';
import type { AgentLogsService } from './agent-logs.service.js';
import * as S from './agent-logs.schemas.js';

export function agentLogSubmissionRoutes(deps: { agentLogs: AgentLogsService }): FastifyPluginAsyncTypebox {
  const agent = { config: { auth: { via: ['agent'] } } } as const;
  const tags = ['agents'];
  return async (app) => {
    app.post('/agents/:id/logs', {
      ...agent,
      schema: {
        operationId: 'submitDiagnosticLogs',
        tags,
        summary: 'Submit agent diagnostic logs (1-500 entries, all stored or none)',
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
      ...agent,
      schema: {
        operationId: 'submitEventLogs',
        tags,
        summary: 'Submit device event logs (up to 1000); duplicates of (source, eventId) are skipped and not counted',
        params: S.AgentParams,
        body: S.EventLogsBody,
        response: { 200: S.EventLogsAccepted },
      },
    }, (request) => deps.agentLogs.submitEventLogs(agentOf(request), request.body.events, request.meta));
  };
}
