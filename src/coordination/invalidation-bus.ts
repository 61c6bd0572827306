// Tells every instance that cached state went stale (a session revoked, a user or partner changed,
// later an API key revoked). Local handlers run at once; with REDIS_URL the message also goes to
// the other instances over pub/sub. Caches still carry a short TTL, which bounds staleness if a
// message is lost while Redis is unreachable.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export type InvalidationHandler = (message: string) => void;

export interface InvalidationBus {
  publish(channel: string, message: string): void;
  subscribe(channel: string, handler: InvalidationHandler): void;
  close(): Promise<void>;
}

const PREFIX = 'dms:invalidate:';

function createHandlerTable() {
  const handlers = new Map<string, InvalidationHandler[]>();
  return {
    add(channel: string, handler: InvalidationHandler) {
      handlers.set(channel, [...(handlers.get(channel) ?? []), handler]);
    },
    deliver(channel: string, message: string) {
      for (const handler of handlers.get(channel) ?? []) handler(message);
    },
  };
}

export function createLocalBus(): InvalidationBus {
  const table = createHandlerTable();
  return {
    publish: (channel, message) => table.deliver(channel, message),
    subscribe: (channel, handler) => table.add(channel, handler),
    close: async () => {},
  };
}

export async function createRedisBus(url: string, log: (level: 'warn' | 'error' | 'info', message: string) => void): Promise<InvalidationBus> {
  const table = createHandlerTable();
  const origin = randomUUID();
  // The subscriber queues its subscription until Redis answers; the publisher fails fast instead
  // of queueing, so a Redis outage is logged at once rather than piling up messages.
  const publisher = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const subscriber = new Redis(url);
  for (const [name, connection] of [['publisher', publisher], ['subscriber', subscriber]] as const) {
    connection.on('error', (err: Error) => log('error', `Redis ${name} error: ${err.message}; cache invalidation falls back to TTL expiry`));
  }
  subscriber.on('pmessage', (_pattern: string, channel: string, raw: string) => {
    try {
      const { from, message } = JSON.parse(raw) as { from: string; message: string };
      if (from !== origin) table.deliver(channel.slice(PREFIX.length), message);
    } catch {
      log('warn', `ignored malformed invalidation message on ${channel}`);
    }
  });
  const subscribed = subscriber.psubscribe(`${PREFIX}*`);
  const startupWait = new Promise((resolve) => setTimeout(resolve, 3000).unref());
  if ((await Promise.race([subscribed.then(() => true, () => false), startupWait])) !== true) {
    log('error', 'Redis at REDIS_URL did not answer within 3 s; starting anyway and retrying in the background');
  }
  return {
    publish(channel, message) {
      table.deliver(channel, message);
      publisher.publish(PREFIX + channel, JSON.stringify({ from: origin, message })).catch((err: Error) => {
        log('error', `could not publish invalidation on ${channel}: ${err.message}`);
      });
    },
    subscribe: (channel, handler) => table.add(channel, handler),
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
