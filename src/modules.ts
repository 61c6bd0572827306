// Builds every domain module from the database, the coordination stores and the config: the
// services the routes call, the authenticators the auth plugin checks credentials with, and the
// background workers. Nothing here starts or listens; app.ts does that.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { InvalidationBus } from './coordination/invalidation-bus.js';
import { createAuditRecorder } from './audit/recorder.js';
import { createSealer } from './audit/sealer.js';
import { createAuditCheckpoints, loadAuditSigner } from './audit/checkpoints.js';
import { createAuditService } from './audit/audit.service.js';
import { createVerifyPool } from './audit/verify-pool.js';
import { createAuditReportsService } from './audit/reports.service.js';
import { createAuditExportService } from './audit/export.service.js';
import { createArchiveStore } from './audit/archive-store.js';
import { createRetentionService } from './audit/retention.service.js';
import { createAuthService } from './identity/auth.service.js';
import { createCallerResolver, IDENTITY_CHANGED } from './identity/callers.js';
import { createIdentityHousekeeping } from './identity/housekeeping.js';
import { createRegistrationService } from './identity/registration.service.js';
import { createTokenService } from './identity/tokens.js';
import { createSessionIssuer } from './identity/session-issuer.js';
import { createAccountService } from './identity/account.service.js';
import { createTotpService } from './identity/totp.js';
import { createUsersService } from './identity/users.service.js';
import { createOidcClient } from './identity/sso/oidc-client.js';
import { createSsoConfigs } from './identity/sso/sso-configs.js';
import { createSsoService } from './identity/sso/sso.service.js';
import { createInvitationsService } from './identity/invitations.service.js';
import { createPasswordResetService } from './identity/password-reset.service.js';
import { createMailer } from './mail/mailer.js';
import { createOrganizationsService } from './tenancy/organizations.service.js';
import { createPartnersService } from './tenancy/partners.service.js';
import { createSitesService, type SiteView } from './tenancy/sites.service.js';
import { createSiteListCache } from './tenancy/site-list-cache.js';
import { createApiKeysService } from './api-keys/api-keys.service.js';
import { createApiKeyAuth } from './api-keys/key-auth.js';
import type { RateLimitStore } from './api-keys/rate-limiter.js';
import { createUsageRecorder } from './api-keys/usage-recorder.js';
import { createEnrollmentKeysService } from './enrollment-keys/enrollment-keys.service.js';
import { createAgentAuthenticator } from './devices/agent-credential.js';
import { createDevicesService } from './devices/devices.service.js';
import { createEnrollmentService } from './devices/enrollment.service.js';
import { createAgentLogsService } from './agent-logs/agent-logs.service.js';
import { createAgentGateway } from './live-queries/gateway.js';
import { createLiveQueriesService } from './live-queries/live-queries.service.js';
import { observeRelay, type Relay } from './live-queries/relay.js';
import type { MetricsHooks } from './observability/metrics.js';
import { createAuditFeed } from './audit/feed.js';
import { createSecretBox } from './secret-box.js';
import { createEventSender } from './event-destinations/sender.js';
import { createEventDestinationsService } from './event-destinations/event-destinations.service.js';

export interface ModuleDeps {
  config: Config;
  db: Database;
  bus: InvalidationBus;
  rateLimits: RateLimitStore;
  relay: Relay;
  now: () => number;
  log: FastifyBaseLogger;
  /** What the modules report to the metrics; unset (METRICS_TOKEN unset): nothing is counted. */
  metrics?: MetricsHooks | undefined;
}

export async function buildModules({ config, db, bus, rateLimits, relay: sharedRelay, now, log, metrics }: ModuleDeps) {
  const logError = (err: unknown, message: string) => log.error({ err }, message);

  // Audit first: every other module records through it.
  const checkpoints = createAuditCheckpoints({
    db,
    signer: await loadAuditSigner({ auditSigningKey: config.auditSigningKey, dataDir: config.dataDir }),
    everyRows: config.auditCheckpointEveryRows,
    everyMinutes: config.auditCheckpointEveryMinutes,
    now,
    log: logError,
    onSigned: metrics?.checkpointsSigned,
  });
  // The sender learns of new sealed entries once their seal commits.
  const sealer = createSealer({ db, log: logError, onSealed: async (tx, sealed) => {
    await checkpoints.afterSeal(tx, sealed);
    tx.afterCommit(() => eventSender.wake());
  } });
  const recordAudit = createAuditRecorder({ now, onRecorded: sealer.wake });
  const outbound = { allowPrivate: config.outboundAllowPrivate };
  const destinationSecrets = createSecretBox(config.encryptionKey, 'event-destination-secret');
  const eventSender = createEventSender({ db, feed: createAuditFeed(db), secrets: destinationSecrets, policy: outbound, recordAudit, now, log: logError });
  const retention = createRetentionService({
    db,
    recordAudit,
    archive: createArchiveStore({ dataDir: config.dataDir, s3: config.auditArchiveS3 }),
    checkpoints,
    intervalMinutes: config.auditRetentionIntervalMinutes,
    now,
    log: (level, message, err) => log[level]({ err }, message),
    onRun: metrics?.retentionRun,
  });
  // Warm verify workers retire after a minute without work: an idle service holds no extra heap.
  // On PGlite (no connection) they hash the rows the main thread reads.
  const verifyPool = createVerifyPool({ connection: db.connection, size: 2, idleMs: 60_000 });

  const tokens = createTokenService(config.jwtSecret, now);
  const callers = createCallerResolver({ db, tokens, bus, now });
  const issuer = createSessionIssuer({ tokens, recordAudit, now });
  const ssoSecrets = createSecretBox(config.encryptionKey, 'sso-client-secret');
  const idp = createOidcClient({ now });
  const ssoConfigs = createSsoConfigs({ secrets: ssoSecrets, idp });
  const sso = createSsoService({ db, idp, secrets: ssoSecrets, issuer, tokens, recordAudit, publicUrl: config.publicUrl, now });
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, log });
  const siteLists = createSiteListCache<SiteView>({ bus, now, clearOn: [IDENTITY_CHANGED] });
  const usage = createUsageRecorder({ db, log: logError, store: rateLimits, now });
  const apiKeyAuth = createApiKeyAuth({ db, store: rateLimits, usage, bus, now, onRateLimited: metrics?.apiKeyRateLimited });

  const sites = createSitesService({ db, recordAudit, listCache: siteLists });
  const devices = createDevicesService({ db, recordAudit, now, onDecommissioned: (deviceId) => void gateway.disconnect(deviceId) });
  const enrollmentKeys = createEnrollmentKeysService({ db, recordAudit, pepper: config.enrollmentKeyPepper, defaultTtlMinutes: config.enrollmentKeyDefaultTtlMinutes, now });
  // Only a Redis relay calls other instances; the in-process one answers DEVICE_OFFLINE itself.
  const relay = metrics && config.redisUrl ? observeRelay(sharedRelay, metrics.relayCall) : sharedRelay;
  const gateway = createAgentGateway({
    timeoutMs: config.liveQueryTimeoutMs,
    relay,
    onSeen: (deviceId) => void devices.markSeen(deviceId).catch((err: unknown) => log.warn({ err }, 'could not mark an agent seen')),
    log: (level, message) => log[level](message),
  });

  const auth = createAuthService({ db, tokens, totp: createTotpService(config.encryptionKey), callers, recordAudit, issuer, now, passwordSignInAllowed: sso.passwordSignInAllowed,
    observe: metrics && { failed: metrics.signInFailed, throttled: metrics.signInThrottled } });

  return {
    authenticators: { jwt: callers.authenticateJwt, apiKey: apiKeyAuth, agent: createAgentAuthenticator({ db }) },
    services: {
      auth,
      sso,
      ssoConfigs,
      users: createUsersService({ db, callers, recordAudit, now }),
      invitations: createInvitationsService({ db, issuer, recordAudit, mailer, publicUrl: config.publicUrl, now }),
      passwordResets: createPasswordResetService({ db, callers, recordAudit, mailer, publicUrl: config.publicUrl, now }),
      account: createAccountService({ db, callers, recordAudit, now, reserveOwnPasswordAttempt: auth.reserveOwnPasswordAttempt }),
      registration: createRegistrationService({ db, recordAudit, open: config.allowPartnerSignup }),
      audit: createAuditService({ db, verifyPool }),
      auditExports: createAuditExportService({ db, recordAudit, now }),
      auditReports: createAuditReportsService({ db, now }),
      checkpoints,
      retention,
      partners: createPartnersService({ db, recordAudit, announceChange: callers.announceChange, ssoConfigs }),
      organizations: createOrganizationsService({ db, recordAudit, announceChange: callers.announceChange, ssoConfigs, onDeleted: (orgId) => void gateway.disconnectOrganization(orgId) }),
      sites,
      apiKeys: createApiKeysService({ db, recordAudit, keyChanged: apiKeyAuth.keyChanged, now }),
      enrollmentKeys,
      devices,
      enrollment: createEnrollmentService({ db, recordAudit, now, enrollmentKeys, sites }),
      agentLogs: createAgentLogsService({ db, recordAudit, now, deviceInReach: devices.deviceInReach }),
      live: createLiveQueriesService({ db, gateway, recordAudit, deviceInReach: devices.deviceInReach, onQuery: metrics?.liveQuery }),
      gateway,
      eventDestinations: createEventDestinationsService({
        db, recordAudit, secrets: destinationSecrets, policy: outbound, sendTest: eventSender.sendTest, wake: eventSender.wake, now,
      }),
    },
    workers: {
      sealer,
      checkpoints,
      retention,
      housekeeping: createIdentityHousekeeping({ db, now, log: logError }),
      usage,
      verifyPool,
      gateway,
      eventSender,
    },
  };
}

export type Modules = Awaited<ReturnType<typeof buildModules>>;
export type Services = Modules['services'];
