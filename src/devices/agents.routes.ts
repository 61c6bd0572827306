// /agents served by the devices module: enrolment (the enrollment key is the credential) and the
// heartbeat (the agent credential).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AGENT_BODY_LIMIT, agentOf } from '../http/auth.js';
import type { DevicesService } from './devices.service.js';
import type { EnrollmentService } from './enrollment.service.js';
import * as S from './devices.schemas.js';

export function agentRoutes(deps: { enrollment: EnrollmentService; devices: DevicesService }): FastifyPluginAsyncTypebox {
  const tags = ['agents'];
  return async (app) => {
    app.post('/agents/enroll', {
      bodyLimit: AGENT_BODY_LIMIT,
      schema: {
        operationId: 'enrollAgent',
        tags,
        summary: 'Enroll a device with an enrollment key',
        description: 'No other credential. The device lands in the key’s site, else the given siteId of the key’s organization, else its oldest site, else a new site "Default".',
        body: S.EnrollBody,
        response: { 201: S.Enrolled },
      },
    }, async (request, reply) => {
      reply.status(201);
      return deps.enrollment.enroll(request.body, request.meta);
    });

    app.post('/agents/:id/heartbeat', {
      config: { auth: { via: ['agent'] } },
      schema: { operationId: 'recordHeartbeat', tags, summary: 'Agent heartbeat: marks the device online', params: S.AgentParams, body: S.HeartbeatBody, response: { 200: S.HeartbeatReply } },
    }, (request) => deps.devices.heartbeat(agentOf(request), request.body ?? undefined, request.meta));
  };
}
