// Composition root: the HTTP server, the database and coordination stores, the modules, their
// background workers, the auth plugin with the modules' authenticators, and the routes. The only
// file that knows every part; each part is built where its name says.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from './config.js';
import { observeTransactions, openDatabase, pgliteDirFor, type Database } from './db/database.js';
import { SYSTEM_SCOPE, withTenant } from './db/tenant-scope.js';
import { deploymentId } from './api-keys/api-keys.repo.js';
import { keepPrivate } from './db/private-files.js';
import { AppError, databaseUnavailable } from './errors.js';
import { installAuth } from './http/auth.js';
import { sendProblem } from './http/error-handler.js';
import { createServer } from './http/server.js';
import { createLocalBus, createRedisBus, type InvalidationBus } from './coordination/invalidation-bus.js';
import { connectRedis } from './coordination/redis.js';
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitStore } from './api-keys/rate-limiter.js';
import type { UsageRecorder } from './api-keys/usage-recorder.js';
import type { AuditCheckpoints } from './audit/checkpoints.js';
import type { RetentionService } from './audit/retention.service.js';
import type { Sealer } from './audit/sealer.js';
import { ensureBootstrapAdmin, type BootstrapResult } from './identity/bootstrap.js';
import type { IdentityHousekeeping } from './identity/housekeeping.js';
import { createLocalRelay, createRedisRelay, type Relay } from './live-queries/relay.js';
import { buildModules } from './modules.js';
import { createMetrics } from './observability/metrics.js';
import { metricsRoutes } from './observability/metrics.routes.js';
import { registerRoutes } from './routes.js';
import { startWorkers } from './workers.js';
import type { EventSender } from './event-destinations/sender.js';
import type { Tracing } from './observability/tracing.js';

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
    /** The outbound event sender: tests run a delivery pass on demand and read its counts. */
    eventSender: EventSender;
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
  /** OpenTelemetry, started by main.ts before this module was imported (OTEL_EXPORTER_OTLP_ENDPOINT). */
  tracing?: Tracing;
}

interface Coordination {
  bus: InvalidationBus;
  rateLimits: RateLimitStore;
  relay: Relay;
}

/** Redis when REDIS_URL is set (state shared across instances), else in-process stores. */
async function connectCoordination(redisUrl: string | null, app: FastifyInstance, db: Database): Promise<Coordination> {
  if (!redisUrl) return { bus: createLocalBus(), rateLimits: createMemoryRateLimitStore(), relay: createLocalRelay() };
  const log = (level: 'warn' | 'error' | 'info', message: string) => app.log[level](message);
  const usageNamespace = await withTenant(db, SYSTEM_SCOPE, deploymentId);
  return {
    bus: await createRedisBus(redisUrl, log),
    rateLimits: createRedisRateLimitStore(await connectRedis(redisUrl, 'rate-limit', log), (message) => app.log.error(message), usageNamespace),
    relay: await createRedisRelay(redisUrl, log),
  };
}

function healthRoutes(app: FastifyInstance, db: Database): void {
  app.get('/healthz', {
    schema: { operationId: 'getHealth', tags: ['health'], summary: 'The process is up', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    schema: { operationId: 'getReadiness', tags: ['health'], summary: 'The database answers', response: { 200: Type.Object({ status: Type.Literal('ready') }) } },
  }, async (request, reply) => {
    try {
      await db.ping();
      return { status: 'ready' as const };
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      return sendProblem(reply, request, databaseUnavailable(err));
    }
  });
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const now = options.now ?? Date.now;
  // Off without METRICS_TOKEN: no hook, no wrapper, nothing counted.
  const metrics = config.metricsToken ? createMetrics({ now, log: (message, err) => app.log.warn({ err }, message) }) : null;
  const app = await createServer({
    logLevel: config.logLevel, logStream: options.logStream, trustProxyHeaders: config.trustProxyHeaders, consoleDir: options.consoleDir,
    onRequestCompleted: metrics ? (request, status, ms) => metrics.requests.record(request.method, request.routeOptions.url, status, ms) : undefined,
    ...(options.tracing ? { logFields: options.tracing.logFields } : {}),
  });
  if (options.tracing) {
    const { tracing } = options;
    tracing.instrument(app);
    // Spans still buffered leave with the process.
    app.addHook('onClose', () => tracing.shutdown());
  }

  const opened = options.db ?? (await openDatabase({
    url: config.databaseUrl,
    ...(config.databaseLogins ? { logins: config.databaseLogins } : {}),
    loginPasswordSecret: config.jwtSecret,
    pgliteDir: options.pgliteDir ?? pgliteDirFor(config.dataDir),
    poolSize: config.databasePoolSize,
    log: (message) => app.log.info(message),
  }));
  const db = metrics ? observeTransactions(opened, metrics.hooks.transaction) : opened;
  const ownsDb = !options.db;
  // Everything under DATA_DIR is the service's alone (the embedded database, secrets, keys, archives).
  const privateFiles = keepPrivate(config.dataDir);
  let coordination: Coordination;
  try {
    coordination = await connectCoordination(config.redisUrl, app, db);
  } catch (err) {
    privateFiles.stop();
    if (ownsDb) await db.close();
    throw err;
  }

  const modules = await buildModules({ config, db, ...coordination, now, log: app.log, metrics: metrics?.hooks });
  metrics?.watch({
    database: () => db.usage(),
    agentSockets: () => modules.workers.gateway.connectedCount(),
    auditBacklog: (top) => modules.workers.sealer.backlog(top),
    deliveries: modules.workers.eventSender.stats,
  });
  const workers = startWorkers(modules.workers);
  app.addHook('preClose', () => workers.closeSockets());
  app.addHook('onClose', async () => {
    // Usage and pending audit rows are written before the database goes.
    await workers.stop();
    await coordination.bus.close();
    await coordination.rateLimits.close();
    if (ownsDb) await db.close();
    privateFiles.stop();
  });
  app.decorate('auditSealer', modules.workers.sealer);
  app.decorate('auditCheckpoints', modules.workers.checkpoints);
  app.decorate('auditRetention', modules.workers.retention);
  app.decorate('apiKeyUsage', modules.workers.usage);
  app.decorate('identityHousekeeping', modules.workers.housekeeping);
  app.decorate('eventSender', modules.workers.eventSender);

  installAuth(app, modules.authenticators);
  healthRoutes(app, db);
  metricsRoutes(app, { token: config.metricsToken, metrics });
  await registerRoutes(app, modules.services);

  const bootstrap = await ensureBootstrapAdmin(db, { email: config.bootstrapAdminEmail, password: config.bootstrapAdminPassword });
  if (bootstrap) options.onBootstrap?.(bootstrap);
  return app;
}
