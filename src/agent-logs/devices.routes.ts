// /devices/:id/… served by the agent-logs module: a device's stored diagnostic and event logs
// (JWT or API key, devices:read). The service checks the device's reach.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { AgentLogsService } from './agent-logs.service.js';
import * as S from './agent-logs.schemas.js';

export function deviceLogRoutes(deps: { agentLogs: AgentLogsService }): FastifyPluginAsyncTypebox {
  const config = { auth: { via: ['jwt', 'api_key'], permission: 'devices:read' } } as const;
  const tags = ['devices'];
  return async (app) => {
    app.get('/devices/:id/diagnostic-logs', {
      config,
      schema: { operationId: 'listDiagnosticLogs', tags, summary: 'Diagnostic logs of a device, newest first', params: S.IdParams, querystring: S.DiagnosticLogQuery, response: { 200: S.DiagnosticLogList } },
    }, (request) => deps.agentLogs.listDiagnosticLogs(callerOf(request), request.params.id, request.query));

    app.get('/devices/:id/eventlogs', {
      config,
      schema: { operationId: 'listStoredEventLogs', tags, summary: 'Stored event logs of a device, newest first', params: S.IdParams, querystring: S.EventLogQuery, response: { 200: S.EventLogList } },
    }, (request) => deps.agentLogs.listEventLogs(callerOf(request), request.params.id, request.query));
  };
}
