// A real HTTP receiver for outbound webhooks in tests: records every request and answers what the
// test tells it to (a status per request, in turn; 200 once the list runs out).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  /** The sender's port: which connection the request came on. */
  remotePort: number | undefined;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Statuses for the next requests, in turn. */
  answer(...statuses: number[]): void;
  /** A status chosen per request from its body (undefined: the next of `answer`, else 200); null stops choosing. */
  answerBy(choose: ((hook: ReceivedWebhook['json']) => number | undefined) | null): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let statuses: number[] = [];
  let choose: ((hook: ReceivedWebhook['json']) => number | undefined) | null = null;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const json = JSON.parse(body) as ReceivedWebhook['json'];
      received.push({ headers: req.headers, remotePort: req.socket.remotePort, body, json });
      res.writeHead(choose?.(json) ?? statuses.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer: (...next) => (statuses = next),
    answerBy: (next) => (choose = next),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
