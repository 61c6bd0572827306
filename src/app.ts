// Composition root: builds the database, the coordination bus and the services, and registers
// plugins and modules. The only file that knows every module.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from './config.js';
import { openDatabase, pgliteDirFor, type Database } from './db/database.js';
import { AppError } from './errors.js';
import { installAuth } from './http/auth.js';
import { installErrorHandling, sendProblem, type NotFoundFallback } from './http/error-handler.js';
import { DEFAULT_CONSOLE_DIR, installConsole } from './http/console.js';
import { installOpenApi } from './http/openapi.js';
import { createValidatorCompiler } from './http/validation.js';
import { createLocalBus, createRedisBus, type InvalidationBus } from './coordination/invalidation-bus.js';
import { createAuthService } from './identity/auth.service.js';
import { authRoutes } from './identity/auth.routes.js';
import { ensureBootstrapAdmin, type BootstrapResult } from './identity/bootstrap.js';
import { createCallerResolver, IDENTITY_CHANGED } from './identity/callers.js';
import { createRegistrationService } from './identity/registration.service.js';
import { createTokenService } from './identity/tokens.js';
import { createTotpService } from './identity/totp.js';
import { usersRoutes } from './identity/users.routes.js';
import { createUsersService } from './identity/users.service.js';
import { auditRoutes } from './audit/audit.routes.js';
import { createAuditService } from './audit/audit.service.js';
import { createVerifyPool } from './audit/verify-pool.js';
import { createIdentityHousekeeping, type IdentityHousekeeping } from './identity/housekeeping.js';
import { createAuditRecorder } from './audit/recorder.js';
import { createSealer, type Sealer } from './audit/sealer.js';
import { createAuditCheckpoints, loadAuditSigner, type AuditCheckpoints } from './audit/checkpoints.js';
import { auditCheckpointRoutes } from './audit/checkpoints.routes.js';
import { createAuditReportsService } from './audit/reports.service.js';
import { auditExportRoutes } from './audit/export.routes.js';
import { createAuditExportService } from './audit/export.service.js';
import { createArchiveStore } from './audit/archive-store.js';
import { auditRetentionRoutes } from './audit/retention.routes.js';
import { createRetentionService, type RetentionService } from './audit/retention.service.js';
import { organizationsRoutes } from './tenancy/organizations.routes.js';
import { createOrganizationsService } from './tenancy/organizations.service.js';
import { partnersRoutes } from './tenancy/partners.routes.js';
import { sitesRoutes } from './tenancy/sites.routes.js';
import { createSitesService, type SiteView } from './tenancy/sites.service.js';
import { createSiteListCache } from './tenancy/site-list-cache.js';
import { createPartnersService } from './tenancy/partners.service.js';
import { apiKeysRoutes } from './api-keys/api-keys.routes.js';
import { createApiKeysService } from './api-keys/api-keys.service.js';
import { createApiKeyAuth } from './api-keys/key-auth.js';
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitStore } from './api-keys/rate-limiter.js';
import { createUsageRecorder, type UsageRecorder } from './api-keys/usage-recorder.js';
import { connectRedis } from './coordination/redis.js';
import { createAgentAuthenticator } from './enrollment/agent-auth.js';
import { agentRoutes } from './enrollment/agent.routes.js';
import { createAgentService } from './enrollment/agent.service.js';
import { devicesRoutes } from './enrollment/devices.routes.js';
import { createDevicesService } from './enrollment/devices.service.js';
import { enrollmentKeysRoutes } from './enrollment/enrollment-keys.routes.js';
import { createEnrollmentKeysService } from './enrollment/enrollment-keys.service.js';
import { agentLogsRoutes } from './agent-logs/agent-logs.routes.js';
import websocket from '@fastify/websocket';
import { createAgentGateway, MAX_FRAME_BYTES, type AgentGateway } from './live-queries/gateway.js';
import { liveQueriesRoutes } from './live-queries/live-queries.routes.js';
import { createLiveQueriesService } from './live-queries/live-queries.service.js';
import { createLocalRelay, createRedisRelay, type Relay } from './live-queries/relay.js';
import { createAgentLogsService } from './agent-logs/agent-logs.service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The audit sealer of this instance: tests and shutdown seal pending rows through it. */
    auditSealer: Sealer;
    /** Signed checkpoints of the audit chains: tests force them through it. */
    auditCheckpoints: AuditCheckpoints;
    /** The audit retention worker: tests run it on demand. */
    auditRetention: RetentionService;
    /** API key usage counted in memory: tests flush it to read exact counts. */
    apiKeyUsage: UsageRecorder;
    /** The hourly cleanup of ended sessions and old sign-in attempts: tests run it on demand. */
    identityHousekeeping: IdentityHousekeeping;
  }
}

export interface AppOptions {
  config: Config;
  /** A database opened by the caller (tests share one); otherwise opened from config and closed with the app. */
  db?: Database;
  /** The clock, for tests that move time (token expiry, attempt windows, TOTP steps). */
  now?: () => number;
  /** Where PGlite lives when DATABASE_URL is unset (default DATA_DIR/pglite). */
  pgliteDir?: string;
  /** Called once when the bootstrap admin was created. */
  onBootstrap?: (result: BootstrapResult) => void;
  /** Where log lines go (default stdout); tests read them to prove secrets stay out. */
  logStream?: NodeJS.WritableStream;
  /** The built web console (default web/dist). */
  consoleDir?: string;
}

const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

// Secrets never reach the logs. Paths are explicit (top level, body, req.body, credential
// headers): wildcard paths cost ~4 µs on every log line, more than half of a cached request's
// logging, and we never log request bodies or headers beyond these places anyway.
// (`code` and `key` only inside bodies: at the top level of a log line `code` is an error code.)
const SECRET_FIELDS = ['password', 'accessToken', 'refreshToken', 'mfaToken', 'secret', 'authToken', 'enrollmentKey'];
const BODY_SECRET_FIELDS = [...SECRET_FIELDS, 'key', 'code'];
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  ...SECRET_FIELDS,
  ...BODY_SECRET_FIELDS.flatMap((field) => [`body.${field}`, `req.body.${field}`]),
];

/** One access-log line per request, after the response, instead of Fastify's two. */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: Math.round(reply.elapsedTime * 100) / 100 };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const now = options.now ?? Date.now;

  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Buffered, asynchronous writes: a synchronous write per access-log line cost more than the
      // rest of a cached request. pino flushes the buffer on exit.
      stream: options.logStream ?? pino.destination({ dest: 1, sync: false, minLength: 4096 }),
    },
    logController: new AccessLog(),
    genReqId: requestId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    // SPEC writes list roots as `/` under a prefix: /api/v1/audit-logs and /api/v1/audit-logs/ are one route.
    routerOptions: { ignoreTrailingSlash: true },
    // Requests that arrive while shutting down get a problem body from the hook below instead.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(createValidatorCompiler());
  let consoleFallback: NotFoundFallback | null = null;
  installErrorHandling(app, () => consoleFallback);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      throw new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance');
    }
  });
  // API.md §4: an empty query parameter (limit=) counts as absent.
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (query && typeof query === 'object') {
      for (const [key, value] of Object.entries(query)) if (value === '') delete query[key];
    }
  });
  // Bodiless POSTs (rotate, MFA setup) are often sent with a JSON content type: treat empty as no body.
  // JSON everywhere (API.md): other bodies are 415, not parsed as text.
  app.removeContentTypeParser('text/plain');
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    defaultJsonParser(request, body as string, done);
  });

  await installOpenApi(app);
  consoleFallback = await installConsole(app, options.consoleDir ?? DEFAULT_CONSOLE_DIR);

  const db = options.db ?? (await openDatabase({
    url: config.databaseUrl,
    pgliteDir: options.pgliteDir ?? pgliteDirFor(config.dataDir),
    poolSize: config.databasePoolSize,
    log: (message) => app.log.info(message),
  }));
  const ownsDb = !options.db;
  let bus: InvalidationBus;
  let rateLimits: RateLimitStore;
  let relay: Relay;
  try {
    const redisLog = (level: 'warn' | 'error' | 'info', message: string) => app.log[level](message);
    bus = config.redisUrl ? await createRedisBus(config.redisUrl, redisLog) : createLocalBus();
    rateLimits = config.redisUrl
      ? createRedisRateLimitStore(await connectRedis(config.redisUrl, 'rate-limit', redisLog), (message) => app.log.error(message))
      : createMemoryRateLimitStore();
    relay = config.redisUrl ? await createRedisRelay(config.redisUrl, redisLog) : createLocalRelay();
  } catch (err) {
    if (ownsDb) await db.close();
    throw err;
  }
  const checkpoints = createAuditCheckpoints({
    db,
    signer: await loadAuditSigner({ auditSigningKey: config.auditSigningKey, dataDir: config.dataDir }),
    everyRows: config.auditCheckpointEveryRows,
    everyMinutes: config.auditCheckpointEveryMinutes,
    now,
    log: (err, message) => app.log.error({ err }, message),
  });
  const sealer = createSealer({ db, log: (err, message) => app.log.error({ err }, message), onSealed: checkpoints.afterSeal });
  sealer.start();
  checkpoints.start();
  app.decorate('auditSealer', sealer);
  app.decorate('auditCheckpoints', checkpoints);
  const usage = createUsageRecorder({ db, log: (err, message) => app.log.error({ err }, message) });
  usage.start();
  app.decorate('apiKeyUsage', usage);
  const housekeeping = createIdentityHousekeeping({ db, now, log: (err, message) => app.log.error({ err }, message) });
  housekeeping.start();
  app.decorate('identityHousekeeping', housekeeping);
  app.addHook('onClose', async () => {
    // Usage and pending audit rows are written before the database goes.
    await usage.stop();
    await housekeeping.stop();
    await retention.stop();
    await checkpoints.stop();
    await sealer.stop();
    // Seal what is pending before the database goes (best effort: another instance or the next start seals the rest).
    await sealer.sealNow().catch(() => {});
    await bus.close();
    await rateLimits.close();
    if (ownsDb) await db.close();
  });
  const recordAudit = createAuditRecorder({ now, onRecorded: sealer.wake });
  const retention = createRetentionService({
    db,
    recordAudit,
    archive: createArchiveStore({ dataDir: config.dataDir, s3: config.auditArchiveS3 }),
    checkpoints,
    intervalMinutes: config.auditRetentionIntervalMinutes,
    now,
    log: (level, message, err) => app.log[level]({ err }, message),
  });
  retention.start();
  app.decorate('auditRetention', retention);

  const tokens = createTokenService(config.jwtSecret, now);
  const totp = createTotpService(config.encryptionKey);
  const callers = createCallerResolver({ db, tokens, bus, now });
  const auth = createAuthService({ db, tokens, totp, callers, recordAudit, now });
  const users = createUsersService({ db, callers, recordAudit, now });
  const registration = createRegistrationService({ db, recordAudit });
  // Warm verify workers retire after a minute without work: an idle service holds no extra heap.
  const verifyPool = db.connection ? createVerifyPool({ connection: db.connection, size: 2, idleMs: 60_000 }) : null;
  if (verifyPool) app.addHook('onClose', () => verifyPool.close());
  const audit = createAuditService({ db, verifyPool });
  const partners = createPartnersService({ db, recordAudit, announceChange: callers.announceChange });
  const organizations = createOrganizationsService({ db, recordAudit, announceChange: callers.announceChange });
  const siteLists = createSiteListCache<SiteView>({ bus, now, clearOn: [IDENTITY_CHANGED] });
  const sites = createSitesService({ db, recordAudit, listCache: siteLists });
  const apiKeyAuth = createApiKeyAuth({ db, store: rateLimits, usage, bus, now });
  const apiKeys = createApiKeysService({ db, recordAudit, keyChanged: apiKeyAuth.keyChanged, now });
  const authenticateAgent = createAgentAuthenticator({ db });
  const devices = createDevicesService({ db, recordAudit, now });
  const enrollmentKeys = createEnrollmentKeysService({ db, recordAudit, pepper: config.enrollmentKeyPepper, defaultTtlMinutes: config.enrollmentKeyDefaultTtlMinutes, now });
  const agents = createAgentService({ db, recordAudit, pepper: config.enrollmentKeyPepper, now, sitesChanged: siteLists.changed });
  const agentLogs = createAgentLogsService({ db, recordAudit, now });
  const gateway: AgentGateway = createAgentGateway({
    timeoutMs: config.liveQueryTimeoutMs,
    relay,
    onSeen: (deviceId) => void devices.markSeen(deviceId).catch((err: unknown) => app.log.warn({ err }, 'could not mark an agent seen')),
    log: (level, message) => app.log[level](message),
  });
  const live = createLiveQueriesService({ db, gateway, recordAudit, deviceInReach: devices.deviceInReach });
  // Sockets close first on shutdown, so agents reconnect elsewhere while the rest winds down.
  app.addHook('preClose', async () => {
    await gateway.close();
  });

  installAuth(app, { jwt: callers.authenticateJwt, apiKey: apiKeyAuth });

  app.get('/healthz', {
    schema: { tags: ['health'], summary: 'The process is up', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    schema: { tags: ['health'], summary: 'The database answers', response: { 200: Type.Object({ status: Type.Literal('ready') }) } },
  }, async (request, reply) => {
    try {
      await db.ping();
      return { status: 'ready' as const };
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      return sendProblem(reply, request, new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable'));
    }
  });

  await app.register(authRoutes({ auth, registration, trustProxyHeaders: config.trustProxyHeaders, allowPartnerSignup: config.allowPartnerSignup }), { prefix: '/api/v1' });
  await app.register(usersRoutes({ users, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(auditRoutes({ audit }), { prefix: '/api/v1' });
  await app.register(auditExportRoutes({ exports: createAuditExportService({ db, recordAudit, now }), trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(auditCheckpointRoutes({ checkpoints, reports: createAuditReportsService({ db, now }) }), { prefix: '/api/v1' });
  await app.register(auditRetentionRoutes({ retention, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(partnersRoutes({ partners, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1/orgs' });
  await app.register(organizationsRoutes({ organizations, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1/orgs' });
  await app.register(sitesRoutes({ sites, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1/orgs' });
  await app.register(apiKeysRoutes({ apiKeys, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(enrollmentKeysRoutes({ enrollmentKeys, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(agentRoutes({ agents, authenticateAgent, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(devicesRoutes({ devices, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES } });
  await app.register(liveQueriesRoutes({ live, gateway, authenticateAgent, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });
  await app.register(agentLogsRoutes({ agentLogs, authenticateAgent, devices, trustProxyHeaders: config.trustProxyHeaders }), { prefix: '/api/v1' });

  const bootstrap = await ensureBootstrapAdmin(db, { email: config.bootstrapAdminEmail, password: config.bootstrapAdminPassword });
  if (bootstrap) options.onBootstrap?.(bootstrap);

  return app;
}
