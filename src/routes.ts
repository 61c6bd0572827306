// Registers every module's routes under /api/v1 (tenancy under /api/v1/orgs, SPEC's prefix).
// A route file serves the URL its name says: X.routes.ts serves /X, and /agents/... routes live
// with the module that owns what they serve.
import type { FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import type { Services } from './modules.js';
import { authRoutes } from './identity/auth.routes.js';
import { usersRoutes } from './identity/users.routes.js';
import { ssoRoutes } from './identity/sso/sso.routes.js';
import { invitationsRoutes } from './identity/invitations.routes.js';
import { passwordResetRoutes } from './identity/password-reset.routes.js';
import { auditRoutes } from './audit/audit.routes.js';
import { auditExportRoutes } from './audit/export.routes.js';
import { auditCheckpointRoutes } from './audit/checkpoints.routes.js';
import { auditReportsRoutes } from './audit/reports.routes.js';
import { auditRetentionRoutes } from './audit/retention.routes.js';
import { partnersRoutes } from './tenancy/partners.routes.js';
import { organizationsRoutes } from './tenancy/organizations.routes.js';
import { sitesRoutes } from './tenancy/sites.routes.js';
import { apiKeysRoutes } from './api-keys/api-keys.routes.js';
import { apiKeyAuthRoutes } from './api-keys/auth.routes.js';
import { enrollmentKeysRoutes } from './enrollment-keys/enrollment-keys.routes.js';
import { devicesRoutes } from './devices/devices.routes.js';
import { agentRoutes } from './devices/agents.routes.js';
import { agentLogSubmissionRoutes } from './agent-logs/agents.routes.js';
import { deviceLogRoutes } from './agent-logs/devices.routes.js';
import { agentSocketRoutes } from './live-queries/agents.routes.js';
import { systemToolsRoutes } from './live-queries/system-tools.routes.js';
import { MAX_FRAME_BYTES } from './live-queries/protocol.js';
import { eventDestinationsRoutes } from './event-destinations/event-destinations.routes.js';

export async function registerRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const api = { prefix: '/api/v1' };
  const s = services;
  await app.register(authRoutes({ auth: s.auth, account: s.account, registration: s.registration }), api);
  await app.register(usersRoutes({ users: s.users }), api);
  await app.register(ssoRoutes({ sso: s.sso, ssoConfigs: s.ssoConfigs }), api);
  await app.register(invitationsRoutes({ invitations: s.invitations }), api);
  await app.register(passwordResetRoutes({ passwordResets: s.passwordResets }), api);
  await app.register(auditRoutes({ audit: s.audit }), api);
  await app.register(auditExportRoutes({ exports: s.auditExports }), api);
  await app.register(auditCheckpointRoutes({ checkpoints: s.checkpoints }), api);
  await app.register(auditReportsRoutes({ reports: s.auditReports }), api);
  await app.register(auditRetentionRoutes({ retention: s.retention }), api);
  await app.register(partnersRoutes({ partners: s.partners }), { prefix: '/api/v1/orgs' });
  await app.register(organizationsRoutes({ organizations: s.organizations }), { prefix: '/api/v1/orgs' });
  await app.register(sitesRoutes({ sites: s.sites }), { prefix: '/api/v1/orgs' });
  await app.register(apiKeysRoutes({ apiKeys: s.apiKeys }), api);
  await app.register(apiKeyAuthRoutes(), api);
  await app.register(enrollmentKeysRoutes({ enrollmentKeys: s.enrollmentKeys }), api);
  await app.register(devicesRoutes({ devices: s.devices }), api);
  await app.register(agentRoutes({ enrollment: s.enrollment, devices: s.devices }), api);
  await app.register(agentLogSubmissionRoutes({ agentLogs: s.agentLogs }), api);
  await app.register(deviceLogRoutes({ agentLogs: s.agentLogs }), api);
  await app.register(systemToolsRoutes({ live: s.live }), api);
  await app.register(eventDestinationsRoutes({ eventDestinations: s.eventDestinations }), api);
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES } });
  await app.register(agentSocketRoutes({ gateway: s.gateway }), api);
}
