// A Redis command connection for request paths: commands fail fast instead of queueing while
// Redis is away (callers fall back and log), and it reconnects in the background.
import { Redis } from 'ioredis';

export async function connectRedis(url: string, purpose: string, log: (level: 'warn' | 'error' | 'info', message: string) => void): Promise<Redis> {
  // Auto-pipelining writes the commands of one event-loop turn together: one write for many requests.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000, lazyConnect: true, enableAutoPipelining: true });
  let reported = false;
  redis.on('error', (err: Error) => {
    if (reported) return;
    reported = true;
    log('error', `Redis (${purpose}) error: ${err.message}`);
  });
  redis.on('ready', () => {
    if (reported) log('info', `Redis (${purpose}) is back`);
    reported = false;
  });
  const connected = redis.connect().then(() => true, () => false);
  const startupWait = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000).unref());
  if (!(await Promise.race([connected, startupWait]))) {
    log('error', `Redis (${purpose}) at REDIS_URL did not answer within 3 s; starting anyway and retrying in the background`);
  }
  return redis;
}
