// One webhook delivery attempt per the Standard Webhooks specification (API.md §9). Every outcome,
// failures included, comes back as a DeliveryResult: the sender records attempts, it never catches.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { describeConnectionError, guardedLookup, literalHostRefusal, type OutboundPolicy } from './outbound-address.js';

export interface DeliveryResult {
  delivered: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

/** Enough of the body to know the receiver answered; the rest is not ours to hold. */
const RESPONSE_BODY_LIMIT = 1024;
const DEFAULT_TIMEOUT_MS = 10_000;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function signatures(secrets: string[], messageId: string, at: Date, body: string): string | null {
  try {
    return secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' ');
  } catch {
    return null; // a malformed secret; its text must not reach the error
  }
}

export async function sendWebhook(opts: {
  url: string;
  secrets: string[];
  messageId: string;
  body: string;
  policy: OutboundPolicy;
  timeoutMs?: number;
  now?: () => number;
  /** A keep-alive agent of this destination's own (the sender's); without it, a connection per attempt. */
  agent?: http.Agent;
}): Promise<DeliveryResult> {
  const started = performance.now();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = (delivered: boolean, responseStatus: number | null, error: string | null): DeliveryResult => ({
    delivered,
    responseStatus,
    error,
    durationMs: Math.round(performance.now() - started),
  });

  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    return result(false, null, 'invalid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return result(false, null, `unsupported scheme ${url.protocol}`);
  if (url.protocol === 'http:' && !opts.policy.allowPrivate) return result(false, null, 'destination not allowed: webhook URLs must use https://');
  const refusal = literalHostRefusal(url.hostname, opts.policy);
  if (refusal) return result(false, null, refusal.message);
  if (opts.secrets.length === 0) return result(false, null, 'no signing secret');

  const at = new Date((opts.now ?? Date.now)());
  const signature = signatures(opts.secrets, opts.messageId, at, opts.body);
  if (signature === null) return result(false, null, 'invalid signing secret');

  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    let completed = false; // the whole response was read: its socket may serve the next attempt
    let status: number | null = null;
    let request: http.ClientRequest | undefined;
    const finish = (delivered: boolean, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!completed) request?.destroy();
      resolve(result(delivered, status, error));
    };
    const timer = setTimeout(() => finish(false, `no answer within ${timeoutMs / 1000} s`), timeoutMs);
    const answered = () => {
      if (status === null) return finish(false, 'no response');
      if (status >= 200 && status < 300) return finish(true, null);
      if (status >= 300 && status < 400) return finish(false, `redirect not followed (HTTP ${status})`);
      return finish(false, `HTTP ${status}`);
    };

    const options: http.RequestOptions = {
      method: 'POST',
      // Never a socket shared across destinations: the destination's own agent, or none.
      agent: opts.agent ?? false,
      lookup: guardedLookup(opts.policy),
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(opts.body),
        'user-agent': 'dms-webhooks/1',
        'webhook-id': opts.messageId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      },
    };
    try {
      request = (url.protocol === 'https:' ? https : http).request(url, options);
    } catch {
      return finish(false, 'invalid request (bad header value)'); // e.g. a control character in the id
    }

    request.on('response', (response) => {
      status = response.statusCode ?? null;
      let received = 0;
      let ended = false;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        // The status is the answer; a body that keeps coming is cut off, not buffered.
        if (received > RESPONSE_BODY_LIMIT) answered();
      });
      response.on('end', () => {
        ended = true;
        completed = true;
        answered();
      });
      response.on('error', () => undefined); // 'close' below decides
      response.on('close', () => {
        if (ended || settled) return;
        // A success cut short is not a delivery: the receiver may not have committed it.
        if (status !== null && status >= 200 && status < 300) finish(false, 'connection closed before the response ended');
        else answered();
      });
    });
    request.on('error', (err) => finish(false, describeConnectionError(err)));
    request.end(opts.body);
  });
}
