// The reference agent, as a library: enroll (or reuse the saved identity), heartbeat, ship its own
// diagnostic logs, and answer live event-log queries over the WebSocket from a sample event log.
// main.ts is only the CLI around startAgent(); tests drive startAgent() directly.
import os from 'node:os';
import { encodeReply, handleCommandFrame } from './command-handler.js';
import { createDiagnosticLog, MAX_BATCH, type DiagnosticLog } from './diagnostic-log.js';
import { createEventLogStore } from './event-log-store.js';
import { generateSampleEventLogs } from './sample-event-log.js';
import { createServiceClient, normaliseServerUrl, ServiceError, websocketUrl, type EnrollRequest, type Identity } from './service-client.js';
import { DEFAULT_STATE_PATH, loadState, saveState } from './state-file.js';
import { openWebSocketLink, type WebSocketLink } from './websocket-link.js';

export const AGENT_VERSION = '1.0.0';
const DEFAULT_HEARTBEAT_S = 60;
const DEFAULT_LOG_SHIP_MS = 5_000;
const FINAL_FLUSH_TIMEOUT_MS = 5_000;

export interface AgentOptions {
  /** Base URL of the service, e.g. http://localhost:3000 (a trailing /api/v1 is tolerated). */
  server: string;
  /** Needed only when the state file holds no identity yet. */
  enrollmentKey?: string;
  statePath?: string;
  /** Overrides the interval the service asks for (seconds; fractions allowed for tests). */
  heartbeatIntervalSeconds?: number;
  logShipIntervalMs?: number;
  /** Seed and newest-entry time of the sample event log; fix both for reproducible answers. */
  sampleSeed?: number;
  sampleNow?: number;
  hostname?: string;
  /** false: no WebSocket (for tests of the HTTP side without the service's /ws route). */
  websocket?: boolean;
  /** Back-off of WebSocket reconnects (defaults 1 s → 30 s). */
  reconnect?: { initialMs?: number; maxMs?: number };
  /** Receives every printed log line (default: stdout). */
  log?: (line: string) => void;
  verbose?: boolean;
}

export type StopReason =
  | { reason: 'stopped' }
  /** The service refused the saved identity (device decommissioned, or unknown to this service). */
  | { reason: 'revoked'; detail: string };

export interface RunningAgent {
  agentId: string;
  deviceId: string;
  /** True when this start enrolled; false when it reused the saved identity. */
  enrolled: boolean;
  /** Resolves when the WebSocket is open; rejects when the WebSocket is disabled or the agent stops. */
  connected(): Promise<void>;
  /** Closes the socket, ships what is left of the diagnostic log, and resolves `stopped`. */
  stop(): Promise<void>;
  stopped: Promise<StopReason>;
}

/** A failure that prevents the agent from starting: bad key, unreadable state, revoked identity. */
export class AgentStartError extends Error {
  override name = 'AgentStartError';
  constructor(message: string, readonly code?: string) {
    super(message);
  }
}

export function systemFacts(hostname = os.hostname()): Omit<EnrollRequest, 'enrollmentKey'> {
  const platform = os.platform();
  const osType = platform === 'win32' ? 'windows' : platform === 'darwin' ? 'macos' : 'linux';
  const arch = os.arch();
  const architecture = arch === 'x64' ? 'x86_64' : arch === 'ia32' ? 'x86' : arch;
  return { hostname: hostname.slice(0, 255), osType, osVersion: os.release().slice(0, 100) || 'unknown', architecture, agentVersion: AGENT_VERSION };
}

const identityRefused = (err: unknown): err is ServiceError => err instanceof ServiceError && (err.status === 401 || err.status === 404);

export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const server = normaliseServerUrl(options.server);
  const statePath = options.statePath ?? DEFAULT_STATE_PATH;
  const facts = systemFacts(options.hostname);
  const log = createDiagnosticLog({ agentVersion: AGENT_VERSION, ...(options.log ? { print: options.log } : {}), verbose: options.verbose ?? false });
  const client = createServiceClient(server, `dms-reference-agent/${AGENT_VERSION} (${facts.osType}; ${facts.architecture})`);

  const { identity, enrolled } = await loadOrEnroll(options, server, statePath, facts, client, log);

  // Before anything runs in the background: a refused identity must fail the start, not linger.
  const heartbeatOverride = options.heartbeatIntervalSeconds;
  let heartbeatSeconds = heartbeatOverride ?? DEFAULT_HEARTBEAT_S;
  try {
    const reply = await client.heartbeat(identity, { agentVersion: AGENT_VERSION, metrics: metrics(null, log) });
    if (heartbeatOverride === undefined) heartbeatSeconds = serverInterval(reply.heartbeatIntervalSeconds, heartbeatSeconds);
    log.info('heartbeat', `first heartbeat accepted; next every ${heartbeatSeconds} s`);
  } catch (err) {
    if (identityRefused(err)) {
      throw new AgentStartError(`the service refused the saved identity of agent ${identity.agentId} (${err.message}). The device was decommissioned or belongs to another service; delete ${statePath} and enroll again.`, err.code);
    }
    log.warn('heartbeat', `first heartbeat failed: ${(err as Error).message}; will retry`);
  }

  const samples = generateSampleEventLogs({ seed: options.sampleSeed ?? 1, hostname: facts.hostname, now: options.sampleNow ?? Date.now() });
  const store = createEventLogStore(samples);
  log.info('eventlogs', `sample event log ready: ${samples.length} logs, ${samples.reduce((n, s) => n + s.entries.length, 0)} entries`);

  let stopping = false;
  let resolveStopped!: (reason: StopReason) => void;
  const stopped = new Promise<StopReason>((resolve) => (resolveStopped = resolve));
  let heartbeatTimer: NodeJS.Timeout | null = null;
  let shipTimer: NodeJS.Timeout | null = null;
  let link: WebSocketLink | null = null;
  let shipFailing = false;

  const sendLogs = async (batch: Parameters<typeof client.submitLogs>[1]) => {
    try {
      await client.submitLogs(identity, batch);
      if (shipFailing) log.info('logs', 'log shipping recovered');
      shipFailing = false;
      return 'accepted' as const;
    } catch (err) {
      // 400/413: these entries will never be accepted; anything else may pass on a later try.
      if (err instanceof ServiceError && (err.status === 400 || err.status === 413)) return 'rejected' as const;
      if (!shipFailing) log.warn('logs', `log shipping failed: ${(err as Error).message}; keeping entries and retrying`, { pending: log.pending() });
      shipFailing = true;
      return 'retry' as const;
    }
  };

  const shipLoop = () => {
    shipTimer = setTimeout(async () => {
      await log.ship(sendLogs, 4);
      if (!stopping) shipLoop();
    }, options.logShipIntervalMs ?? DEFAULT_LOG_SHIP_MS);
  };

  const heartbeatLoop = () => {
    heartbeatTimer = setTimeout(async () => {
      try {
        const reply = await client.heartbeat(identity, { agentVersion: AGENT_VERSION, metrics: metrics(link, log) });
        if (heartbeatOverride === undefined) {
          const next = serverInterval(reply.heartbeatIntervalSeconds, heartbeatSeconds);
          if (next !== heartbeatSeconds) log.info('heartbeat', `the service asks for a heartbeat every ${next} s`);
          heartbeatSeconds = next;
        }
        log.debug('heartbeat', 'heartbeat accepted', { serverTime: reply.serverTime });
      } catch (err) {
        if (identityRefused(err)) {
          log.error('heartbeat', `identity revoked: ${err.message}. The device was decommissioned; delete ${statePath} and enroll again.`);
          void shutDown({ reason: 'revoked', detail: err.message }, false);
          return;
        }
        log.warn('heartbeat', `heartbeat failed: ${(err as Error).message}`);
      }
      if (!stopping) heartbeatLoop();
    }, heartbeatSeconds * 1000);
  };

  const shutDown = async (reason: StopReason, flush: boolean) => {
    if (stopping) return stopped.then(() => undefined);
    stopping = true;
    if (heartbeatTimer) clearTimeout(heartbeatTimer);
    if (shipTimer) clearTimeout(shipTimer);
    await link?.close();
    log.info('agent', reason.reason === 'stopped' ? 'agent stopped' : 'agent stopped: identity revoked');
    if (flush && log.pending() > 0) {
      const batches = Math.ceil(log.pending() / MAX_BATCH) + 1;
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, FINAL_FLUSH_TIMEOUT_MS).unref());
      await Promise.race([log.ship(sendLogs, batches), timeout]);
    }
    resolveStopped(reason);
  };

  heartbeatLoop();
  shipLoop();
  if (options.websocket !== false) {
    link = openWebSocketLink({
      url: websocketUrl(server, identity.agentId),
      token: identity.authToken,
      log,
      userAgent: `dms-reference-agent/${AGENT_VERSION}`,
      ...(options.reconnect?.initialMs !== undefined ? { initialBackoffMs: options.reconnect.initialMs } : {}),
      ...(options.reconnect?.maxMs !== undefined ? { maxBackoffMs: options.reconnect.maxMs } : {}),
      onFrame: (frame, send) => {
        try {
          const outcome = handleCommandFrame(store, frame);
          if (outcome.kind === 'ignored') {
            log.warn('ws', `ignored a malformed message: ${outcome.reason}`, { preview: frame.slice(0, 200) });
            return;
          }
          send(encodeReply(outcome.reply));
          const { reply } = outcome;
          log.debug('ws', `${outcome.command} → ${reply.status}${reply.error ? ` (${reply.error})` : ''}`, { id: reply.id });
        } catch (err) {
          log.error('ws', `command handling failed: ${(err as Error).message}`);
        }
      },
    });
  }

  return {
    agentId: identity.agentId,
    deviceId: identity.deviceId,
    enrolled,
    connected: () => (link ? link.connected() : Promise.reject(new Error('the WebSocket is disabled'))),
    stop: () => shutDown({ reason: 'stopped' }, true),
    stopped,
  };
}

async function loadOrEnroll(
  options: AgentOptions,
  server: URL,
  statePath: string,
  facts: Omit<EnrollRequest, 'enrollmentKey'>,
  client: ReturnType<typeof createServiceClient>,
  log: DiagnosticLog,
): Promise<{ identity: Identity; enrolled: boolean }> {
  let saved;
  try {
    saved = await loadState(statePath);
  } catch (err) {
    throw new AgentStartError((err as Error).message);
  }
  if (saved) {
    if (saved.server !== server.href) log.warn('enroll', `the saved identity was issued by ${saved.server}, not ${server.href}; using it anyway`);
    log.info('enroll', `reusing the saved identity of agent ${saved.agentId}`, { deviceId: saved.deviceId, state: statePath });
    const { agentId, deviceId, authToken, orgId, siteId } = saved;
    return { identity: { agentId, deviceId, authToken, orgId, siteId }, enrolled: false };
  }
  if (!options.enrollmentKey) throw new AgentStartError(`no saved identity in ${statePath}: --enrollment-key is required to enroll`);

  let identity: Identity;
  try {
    identity = await client.enroll({ enrollmentKey: options.enrollmentKey, ...facts });
  } catch (err) {
    if (err instanceof ServiceError) throw new AgentStartError(`enrollment failed: ${err.message}`, err.code);
    throw err;
  }
  try {
    await saveState(statePath, { ...identity, server: server.href, enrolledAt: new Date().toISOString() });
  } catch (err) {
    // The key use is spent and the token is shown only once: say so rather than fail silently.
    throw new AgentStartError(`enrolled as agent ${identity.agentId} but could not save ${statePath}: ${(err as Error).message}`);
  }
  log.info('enroll', `enrolled as agent ${identity.agentId}`, { deviceId: identity.deviceId, orgId: identity.orgId, siteId: identity.siteId, state: statePath });
  return { identity, enrolled: true };
}

function serverInterval(value: unknown, current: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 1 && value <= 86_400 ? value : current;
}

function metrics(link: WebSocketLink | null, log: DiagnosticLog): Record<string, unknown> {
  const memory = process.memoryUsage();
  return {
    uptimeSeconds: Math.round(os.uptime()),
    agentUptimeSeconds: Math.round(process.uptime()),
    loadAverage1m: os.loadavg()[0] ?? 0,
    cpuCount: os.cpus().length,
    freeMemoryBytes: os.freemem(),
    totalMemoryBytes: os.totalmem(),
    agentRssBytes: memory.rss,
    websocketConnected: link?.isOpen() ?? false,
    pendingLogEntries: log.pending(),
  };
}
