// Outgoing mail (API.md §10): over SMTP when SMTP_URL is set, otherwise each message is written to
// DATA_DIR/outbox/ as an .eml file, so the embedded default works with no mail server at all.
// Messages carry one-use tokens in their bodies, so only the recipient and subject are ever logged,
// and a failure is reported without any part of the message.
import { randomBytes } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTransport } from 'nodemailer';
import { ensurePrivateDir } from '../db/private-files.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  /**
   * Sends one message (or writes it to the outbox); rejects with a MailError naming no part of the
   * body. Logs to `log` when given (the request's, so the line carries its requestId).
   */
  send(message: MailMessage, log?: MailLog): Promise<void>;
}

/** A message that could not be sent; its text names the recipient and the reason, never the body. */
export class MailError extends Error {
  override readonly name = 'MailError';
}

export interface MailLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

// nodemailer waits minutes by default; a mail server that does not answer must not hold a request
// (an invitation) or the reset queue that long.
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export const outboxDir = (dataDir: string) => path.join(dataDir, 'outbox');

/** What a transport's error says, without the message it was sending. */
function reasonOf(err: unknown): { code?: string; responseCode?: number; command?: string; message: string } {
  const e = (err ?? {}) as { code?: unknown; responseCode?: unknown; command?: unknown; message?: unknown };
  return {
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.responseCode === 'number' ? { responseCode: e.responseCode } : {}),
    ...(typeof e.command === 'string' ? { command: e.command } : {}),
    message: typeof e.message === 'string' ? e.message : String(err),
  };
}

export function createMailer(deps: { smtpUrl: string | null; from: string; dataDir: string; log: MailLog }): Mailer {
  const { from } = deps;
  const failed = (message: MailMessage, err: unknown, log: MailLog): MailError => {
    const reason = reasonOf(err);
    log.error({ mail: { to: message.to, subject: message.subject }, reason }, 'mail could not be sent');
    return new MailError(`Mail to ${message.to} could not be sent: ${reason.message}`);
  };

  if (deps.smtpUrl) {
    // smtp:// upgrades with STARTTLS when the server offers it; smtps:// is TLS from the start.
    const smtp = createTransport({ url: deps.smtpUrl, ...SMTP_TIMEOUTS });
    return {
      async send(message, log = deps.log) {
        try {
          const info = await smtp.sendMail({ from, ...message });
          log.info({ mail: { to: message.to, subject: message.subject, messageId: info.messageId } }, 'mail sent');
        } catch (err) {
          throw failed(message, err, log);
        }
      },
    };
  }

  // The stream transport builds the raw message (headers, MIME parts) as SMTP would send it, except
  // that the text and HTML parts go as 8bit, not quoted-printable (which nodemailer picks for any
  // line over 76 characters, as every link is): the file is read by people and scripts looking for
  // the link, and quoted-printable would show `#token=3D…` broken across lines.
  const composer = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const verbatim = (type: string, body: string) => ({
    raw: `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${body.replace(/\r?\n/g, '\r\n')}`,
  });
  const dir = outboxDir(deps.dataDir);
  return {
    async send(message, log = deps.log) {
      try {
        const { text, html, ...envelope } = message;
        const parts = { text: verbatim('text/plain', text), ...(html === undefined ? {} : { html: verbatim('text/html', html) }) };
        const info = await composer.sendMail({ from, ...envelope, ...parts });
        ensurePrivateDir(dir);
        const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
        const file = path.join(dir, `${name}.eml`);
        // Written aside and renamed: whoever watches the outbox never reads half a message.
        const partial = path.join(dir, `.${name}.partial`);
        await writeFile(partial, info.message as Buffer, { mode: 0o600, flag: 'wx' });
        await rename(partial, file);
        log.info({ mail: { to: message.to, subject: message.subject, file } }, 'mail written to the outbox (no SMTP_URL set)');
      } catch (err) {
        throw failed(message, err, log);
      }
    },
  };
}
