// Live queries across instances: with Redis, each instance keeps a presence key per
// connected device (expiring, so a crashed instance's devices go offline within a minute) and
// listens on its own request channel; an instance that receives a query for a device held
// elsewhere publishes it to the holder and waits for the reply on its own reply channel. A
// decommissioned device's socket is closed the same way: on the holder, told over its request channel;
// a deleted organization's sockets, wherever they are, by one message every instance hears.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { AppError, ERROR_CATALOGUE, type ErrorCode, agentTimeout } from '../errors.js';
import { connectRedis } from '../coordination/redis.js';
import type { CommandPayload } from './protocol.js';
import { liveOutcome, type LiveOutcome } from './outcomes.js';

export type RelayHandler = (deviceId: string, command: CommandPayload) => Promise<unknown>;
/** Whose sockets to close: one device's, or every agent's of an organization. */
export type DisconnectTarget = { deviceId: string } | { orgId: string };
export type DisconnectHandler = (target: DisconnectTarget) => void;

export interface Relay {
  announce(deviceId: string): void;
  withdraw(deviceId: string): void;
  /** Runs the command on the instance holding the device; DEVICE_OFFLINE when none does. */
  forward(deviceId: string, command: CommandPayload, timeoutMs: number): Promise<unknown>;
  serve(handler: RelayHandler): void;
  /** Asks the instance holding the device's socket to close it; nothing when no other instance does. */
  disconnect(deviceId: string): Promise<void>;
  /** Asks every other instance to close the sockets of the organization's agents. */
  disconnectOrganization(orgId: string): Promise<void>;
  serveDisconnect(handler: DisconnectHandler): void;
  close(): Promise<void>;
}

/**
 * The same relay, telling `onCall` how each cross-instance query ended: `forwarded` from here to
 * the instance holding the device, or `served` here for another instance (metrics).
 */
export function observeRelay(relay: Relay, onCall: (direction: 'forwarded' | 'served', outcome: LiveOutcome) => void): Relay {
  const observed = <T>(direction: 'forwarded' | 'served', run: Promise<T>): Promise<T> => run.then(
    (result) => {
      onCall(direction, 'ok');
      return result;
    },
    (err: unknown) => {
      onCall(direction, liveOutcome(err));
      throw err;
    },
  );
  return {
    ...relay,
    forward: (deviceId, command, timeoutMs) => observed('forwarded', relay.forward(deviceId, command, timeoutMs)),
    serve: (handler) => relay.serve((deviceId, command) => observed('served', handler(deviceId, command))),
  };
}

const offline = () => new AppError('DEVICE_OFFLINE', 'The device is offline: it must be online and connected to answer live queries');

export function createLocalRelay(): Relay {
  return {
    announce: () => {},
    withdraw: () => {},
    forward: async () => {
      throw offline();
    },
    serve: () => {},
    disconnect: async () => {},
    disconnectOrganization: async () => {},
    serveDisconnect: () => {},
    close: async () => {},
  };
}

const PRESENCE_TTL_MS = 60_000;
const PRESENCE_REFRESH_MS = 20_000;
const presenceKey = (deviceId: string) => `dms:agent-presence:${deviceId}`;
const requestChannel = (instance: string) => `dms:live:req:${instance}`;
const replyChannel = (instance: string) => `dms:live:res:${instance}`;
/** Heard by every instance. */
const BROADCAST_CHANNEL = 'dms:live:all';

// Deletes the presence only if this instance still holds it (a newer socket may be elsewhere).
const WITHDRAW_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

interface RelayRequest { requestId: string; from: string; deviceId: string; command: CommandPayload }
interface RelayDisconnect { disconnect: string }
interface RelayOrganizationDisconnect { disconnectOrganization: string; from: string }
interface RelayReply { requestId: string; ok: boolean; result?: unknown; code?: string; detail?: string }

export async function createRedisRelay(url: string, log: (level: 'warn' | 'error' | 'info', message: string) => void): Promise<Relay> {
  const instance = randomUUID();
  const redis = (await connectRedis(url, 'live queries', log)) as Redis & { dmsWithdraw(key: string, instance: string): Promise<number> };
  redis.defineCommand('dmsWithdraw', { numberOfKeys: 1, lua: WITHDRAW_SCRIPT });
  const subscriber = new Redis(url);
  subscriber.on('error', (err: Error) => log('error', `Redis (live-query subscriber) error: ${err.message}`));
  const local = new Set<string>();
  const waiting = new Map<string, { resolve(v: unknown): void; reject(e: AppError): void; timer: NodeJS.Timeout }>();
  let handler: RelayHandler = async () => {
    throw offline();
  };
  let disconnectHandler: DisconnectHandler = () => {};

  const setPresence = (deviceId: string) =>
    redis.set(presenceKey(deviceId), instance, 'PX', PRESENCE_TTL_MS).catch((err: Error) => log('error', `could not record agent presence: ${err.message}`));
  const refresher = setInterval(() => {
    for (const deviceId of local) void setPresence(deviceId);
  }, PRESENCE_REFRESH_MS).unref();

  subscriber.on('message', (channel: string, raw: string) => {
    try {
      onRelayMessage(channel, raw);
    } catch (err) {
      log('warn', `ignored a malformed relay message on ${channel}: ${(err as Error).message}`);
    }
  });
  function onRelayMessage(channel: string, raw: string) {
    if (channel === BROADCAST_CHANNEL) {
      const request = JSON.parse(raw) as RelayOrganizationDisconnect;
      // The sender closed its own sockets already.
      if (request.from !== instance && typeof request.disconnectOrganization === 'string') disconnectHandler({ orgId: request.disconnectOrganization });
      return;
    }
    if (channel === replyChannel(instance)) {
      const reply = JSON.parse(raw) as RelayReply;
      const entry = waiting.get(reply.requestId);
      if (!entry) return; // timed out here already
      waiting.delete(reply.requestId);
      clearTimeout(entry.timer);
      if (reply.ok) entry.resolve(reply.result);
      else {
        const code = (reply.code && reply.code in ERROR_CATALOGUE ? reply.code : 'AGENT_ERROR') as ErrorCode;
        entry.reject(new AppError(code, reply.detail ?? 'The relayed query failed'));
      }
      return;
    }
    const request = JSON.parse(raw) as RelayRequest | RelayDisconnect;
    if ('disconnect' in request) {
      disconnectHandler({ deviceId: request.disconnect });
      return;
    }
    void handler(request.deviceId, request.command).then(
      (result) => ({ requestId: request.requestId, ok: true, result }),
      (err: unknown) => (err instanceof AppError
        ? { requestId: request.requestId, ok: false, code: err.code, detail: err.message }
        : { requestId: request.requestId, ok: false, code: 'AGENT_ERROR', detail: 'The relayed query failed' }),
    ).then((reply: RelayReply) => redis.publish(replyChannel(request.from), JSON.stringify(reply)))
      .catch((err: Error) => log('error', `could not relay a live-query reply: ${err.message}`));
  }
  // Like the invalidation bus: start even when Redis is away, and subscribe when it comes back.
  const subscribed = subscriber.subscribe(requestChannel(instance), replyChannel(instance), BROADCAST_CHANNEL).then(() => true, () => false);
  const startupWait = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000).unref());
  if (!(await Promise.race([subscribed, startupWait]))) {
    log('error', 'Redis (live-query subscriber) did not answer within 3 s; cross-instance live queries wait for it');
  }

  /** The instance holding the device's socket, when another one does. */
  async function holderOf(deviceId: string): Promise<string | null> {
    const owner = await redis.get(presenceKey(deviceId));
    return owner && owner !== instance ? owner : null;
  }

  return {
    announce(deviceId) {
      local.add(deviceId);
      void setPresence(deviceId);
    },
    withdraw(deviceId) {
      local.delete(deviceId);
      redis.dmsWithdraw(presenceKey(deviceId), instance).catch(() => {});
    },
    async forward(deviceId, command, timeoutMs) {
      let owner: string | null;
      try {
        owner = await holderOf(deviceId);
      } catch (err) {
        log('error', `Redis unavailable for live-query routing: ${(err as Error).message}`);
        throw offline();
      }
      if (!owner) throw offline();
      const requestId = randomUUID();
      return new Promise((resolve, reject) => {
        // The holder enforces the timeout itself; this one only covers a holder that vanished.
        const timer = setTimeout(() => {
          waiting.delete(requestId);
          reject(agentTimeout(timeoutMs));
        }, timeoutMs + 1000);
        waiting.set(requestId, { resolve, reject, timer });
        const message: RelayRequest = { requestId, from: instance, deviceId, command };
        redis.publish(requestChannel(owner!), JSON.stringify(message)).then((receivers) => {
          if (receivers > 0 || !waiting.has(requestId)) return;
          // Nobody listens on the holder's channel: that instance is gone.
          waiting.delete(requestId);
          clearTimeout(timer);
          reject(offline());
        }, () => {
          waiting.delete(requestId);
          clearTimeout(timer);
          reject(offline());
        });
      });
    },
    serve(fn) {
      handler = fn;
    },
    async disconnect(deviceId) {
      try {
        const owner = await holderOf(deviceId);
        if (owner) await redis.publish(requestChannel(owner), JSON.stringify({ disconnect: deviceId } satisfies RelayDisconnect));
      } catch (err) {
        log('error', `could not ask another instance to close device ${deviceId}'s socket: ${(err as Error).message}`);
      }
    },
    async disconnectOrganization(orgId) {
      try {
        await redis.publish(BROADCAST_CHANNEL, JSON.stringify({ disconnectOrganization: orgId, from: instance } satisfies RelayOrganizationDisconnect));
      } catch (err) {
        log('error', `could not ask the other instances to close organization ${orgId}'s agent sockets: ${(err as Error).message}`);
      }
    },
    serveDisconnect(fn) {
      disconnectHandler = fn;
    },
    async close() {
      clearInterval(refresher);
      await Promise.all([...local].map((deviceId) => redis.dmsWithdraw(presenceKey(deviceId), instance).catch(() => 0)));
      for (const [, entry] of waiting) {
        clearTimeout(entry.timer);
        entry.reject(new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down'));
      }
      subscriber.disconnect();
      redis.disconnect();
    },
  };
}
