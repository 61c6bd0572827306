// The agent's WebSocket to the service (API.md §7): authenticated with the agent token, kept up
// with exponential back-off plus jitter (1 s doubling to 30 s) whenever it closes or fails to
// open. Protocol pings are answered by `ws` itself. Text frames go to `onFrame`.
import WebSocket from 'ws';
import { MAX_FRAME_BYTES } from '../live-queries/protocol.js';
import type { AgentLogger } from './diagnostic-log.js';

export interface WebSocketLinkOptions {
  url: string;
  token: string;
  log: AgentLogger;
  /** Called for every text frame; `send` answers on the same socket. */
  onFrame(frame: string, send: (text: string) => void): void;
  userAgent?: string;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** A connection that lasted at least this long resets the back-off. */
  stableAfterMs?: number;
  random?: () => number;
}

export interface WebSocketLink {
  /** Resolves when the socket is open (now, or at the next successful connect). */
  connected(): Promise<void>;
  isOpen(): boolean;
  /** Closes the socket (1000) and stops reconnecting. */
  close(): Promise<void>;
}

const HANDSHAKE_TIMEOUT_MS = 15_000;
const CLOSE_GRACE_MS = 2_000;

/** Equal jitter: half the exponential delay, plus up to that half again at random. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export function openWebSocketLink(options: WebSocketLinkOptions): WebSocketLink {
  const { log } = options;
  const initialMs = options.initialBackoffMs ?? 1_000;
  const maxMs = options.maxBackoffMs ?? 30_000;
  const stableAfterMs = options.stableAfterMs ?? 10_000;
  const random = options.random ?? Math.random;

  let socket: WebSocket | null = null;
  let stopping = false;
  let attempt = 0;
  let openedAt: number | null = null;
  let lastError: string | null = null;
  let reconnectTimer: NodeJS.Timeout | null = null;
  let waiters: { resolve: () => void; reject: (err: Error) => void }[] = [];

  const connect = () => {
    reconnectTimer = null;
    lastError = null;
    openedAt = null;
    const ws = new WebSocket(options.url, {
      headers: { authorization: `Bearer ${options.token}`, ...(options.userAgent ? { 'user-agent': options.userAgent } : {}) },
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    });
    socket = ws;

    ws.on('open', () => {
      openedAt = Date.now();
      log.info('ws', 'connected', { url: options.url });
      const ready = waiters;
      waiters = [];
      for (const waiter of ready) waiter.resolve();
    });

    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        log.warn('ws', 'ignored a binary frame');
        return;
      }
      const frame = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      options.onFrame(frame, (text) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(text);
        else log.warn('ws', 'reply dropped: the socket closed before it could be sent');
      });
    });

    // ws always follows 'error' with 'close'; reconnecting is decided there, once.
    ws.on('error', (err) => {
      lastError = err.message;
    });

    ws.on('close', (code, reason) => {
      if (socket === ws) socket = null;
      if (stopping) return;
      const lived = openedAt === null ? null : Date.now() - openedAt;
      if (lived !== null && lived >= stableAfterMs) attempt = 0;
      const delay = backoffDelay(attempt, initialMs, maxMs, random);
      attempt++;
      if (lived === null) {
        log.warn('ws', `connect failed: ${lastError ?? `closed with ${code}`}; retrying in ${(delay / 1000).toFixed(1)} s`, { attempt });
      } else {
        const why = reason.length > 0 ? `${code} ${reason.toString('utf8')}` : String(code);
        log.warn('ws', `disconnected (${why}); reconnecting in ${(delay / 1000).toFixed(1)} s`, { attempt });
      }
      reconnectTimer = setTimeout(connect, delay);
    });
  };

  connect();

  return {
    connected() {
      if (stopping) return Promise.reject(new Error('the WebSocket link is closed'));
      if (socket?.readyState === WebSocket.OPEN) return Promise.resolve();
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },

    isOpen: () => socket?.readyState === WebSocket.OPEN,

    async close() {
      if (stopping) return;
      stopping = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const pending = waiters;
      waiters = [];
      for (const waiter of pending) waiter.reject(new Error('the WebSocket link is closed'));
      const ws = socket;
      if (!ws || ws.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          ws.terminate();
          resolve();
        }, CLOSE_GRACE_MS);
        ws.once('close', () => {
          clearTimeout(force);
          resolve();
        });
        // close() during CONNECTING aborts the handshake (and emits 'error', handled above).
        ws.close(1000, 'agent stopping');
      });
    },
  };
}
