// A real SMTP server for tests (smtp-server, the library behind many mail servers), on a free port
// of the loopback: it accepts every message and keeps it parsed (mailparser), so a test can read
// what the service sent and follow the link in it. With `auth`, it refuses senders without those
// credentials.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type AddressObject } from 'mailparser';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  /** The SMTP user the sender logged in as, when it did. */
  user: string | null;
}

export interface SmtpSink {
  /** SMTP_URL for the service (with the credentials when the sink asks for them). */
  url: string;
  received: ReceivedMail[];
  /** The first message (already received or still to come) matching `match`. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Messages to this address. */
  to(address: string): ReceivedMail[];
  close(): Promise<void>;
}

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] =>
  [field ?? []].flat().flatMap((a) => a.value.map((v) => (v.address ?? '').toLowerCase()));

export async function startSmtpSink(options: { auth?: { user: string; pass: string } } = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onData(stream, session, callback) {
      simpleParser(stream).then((parsed) => {
        received.push({
          from: addresses(parsed.from)[0] ?? '',
          to: addresses(parsed.to),
          subject: parsed.subject ?? '',
          text: parsed.text ?? '',
          html: typeof parsed.html === 'string' ? parsed.html : null,
          user: typeof session.user === 'string' ? session.user : null,
        });
        for (const wake of waiters) wake();
        callback();
      }, (err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const credentials = options.auth ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@` : '';

  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    received,
    to: (address) => received.filter((m) => m.to.includes(address.toLowerCase())),
    waitFor(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(match);
          if (!found) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching mail within ${timeoutMs} ms (received: ${received.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none'})`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of a link `…#token=…` in a message's text. */
export function linkToken(mail: ReceivedMail, path: string): string {
  const match = new RegExp(`https?://\\S+/${path}#token=([A-Za-z0-9_-]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
  return match[1]!;
}
