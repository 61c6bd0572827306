// The mailer against a real SMTP server (smtp-server on a free port, with credentials from the URL),
// its failures (no body in any log line or error), and the outbox it falls back to without
// SMTP_URL: files only the service's user can read, and, through HTTP, a reset link that works.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { testApp, type TestApp } from '../../test/support/app.js';
import { createUser } from '../../test/support/factory.js';
import { freePort } from '../../test/support/free-port.js';
import { startSmtpSink, type SmtpSink } from '../../test/support/smtp-sink.js';
import { createMailer, MailError, outboxDir, type MailLog } from './mailer.js';

const SECRET = 'pwr_body-only-secret-that-must-never-be-logged';
const message = (to: string) => ({
  to,
  subject: 'Reset your password',
  text: `Open https://console.example.test/reset-password#token=${SECRET}\n`,
  html: `<p><a href="https://console.example.test/reset-password#token=${SECRET}">reset</a></p>`,
});

function collectingLog(): MailLog & { lines: string[] } {
  const lines: string[] = [];
  const write = (level: string) => (obj: object, msg: string) => void lines.push(JSON.stringify({ level, ...obj, msg }));
  return { lines, info: write('info'), error: write('error') };
}

const tmpDir = () => mkdtempSync(path.join(os.tmpdir(), 'dms-mail-'));

describe('mailer over SMTP', () => {
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink({ auth: { user: 'mailer', pass: 'p@ss:word' } });
  });
  after(() => sink.close());

  it('delivers text and HTML with the configured sender, logging in with the URL’s credentials', async () => {
    const log = collectingLog();
    const mailer = createMailer({ smtpUrl: sink.url, from: 'Device Management <no-reply@example.test>', dataDir: tmpDir(), log });
    await mailer.send(message('Someone@Example.test'));
    const mail = await sink.waitFor((m) => m.to.includes('someone@example.test'));
    assert.equal(mail.user, 'mailer');
    assert.equal(mail.from, 'no-reply@example.test');
    assert.equal(mail.subject, 'Reset your password');
    assert.match(mail.text, new RegExp(`#token=${SECRET}`));
    assert.match(mail.html ?? '', /<a href=/);
    assert.equal(log.lines.length, 1);
    assert.match(log.lines[0]!, /Reset your password/);
    assert.ok(!log.lines.join('\n').includes(SECRET), 'the body stays out of the log');
  });

  it('fails with a MailError that names neither body nor credentials when the server refuses the login', async () => {
    const log = collectingLog();
    const wrong = sink.url.replace('p%40ss%3Aword', 'not-it');
    assert.notEqual(wrong, sink.url);
    const mailer = createMailer({ smtpUrl: wrong, from: 'no-reply@example.test', dataDir: tmpDir(), log });
    const err = await mailer.send(message('refused@example.test')).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof MailError, String(err));
    assert.equal(sink.to('refused@example.test').length, 0);
    const logged = log.lines.join('\n');
    assert.match(logged, /mail could not be sent/);
    for (const text of [logged, err.message]) {
      assert.ok(!text.includes(SECRET), text);
      assert.ok(!text.includes('not-it'), text);
    }
  });

  it('fails quickly and cleanly when no server answers', async () => {
    const log = collectingLog();
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${await freePort()}`, from: 'no-reply@example.test', dataDir: tmpDir(), log });
    await assert.rejects(mailer.send(message('nobody@example.test')), (err: unknown) => err instanceof MailError && /ECONNREFUSED/.test(err.message));
    assert.ok(!log.lines.join('\n').includes(SECRET));
  });
});

describe('mailer without SMTP_URL', () => {
  it('writes each message as an .eml file only the service’s user can read, and logs its subject only', async () => {
    const dataDir = tmpDir();
    const log = collectingLog();
    const mailer = createMailer({ smtpUrl: null, from: 'Device Management <no-reply@example.test>', dataDir, log });
    await mailer.send(message('one@example.test'));
    await mailer.send({ ...message('two@example.test'), subject: 'Second' });
    const dir = outboxDir(dataDir);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const files = readdirSync(dir).sort();
    assert.equal(files.length, 2, files.join()); // no partial file left behind
    const parsed = [];
    for (const file of files) {
      assert.match(file, /\.eml$/);
      assert.equal(statSync(path.join(dir, file)).mode & 0o777, 0o600);
      parsed.push(await simpleParser(readFileSync(path.join(dir, file))));
    }
    assert.deepEqual(parsed.map((p) => p.subject).sort(), ['Reset your password', 'Second']);
    const first = parsed.find((p) => p.subject === 'Reset your password')!;
    assert.match(first.text ?? '', new RegExp(SECRET));
    assert.equal([first.from ?? []].flat()[0]!.value[0]!.address, 'no-reply@example.test');
    assert.equal(log.lines.length, 2);
    assert.match(log.lines[0]!, /outbox/);
    assert.match(log.lines.join('\n'), /Reset your password/);
    assert.ok(!log.lines.join('\n').includes(SECRET));
  });
});

describe('the outbox through HTTP (the embedded default)', () => {
  let t: TestApp;
  let logged = '';
  before(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => {
      logged += chunk.toString();
    });
    t = await testApp({ env: { LOG_LEVEL: 'info', PUBLIC_URL: 'https://console.example.test/', TRUST_PROXY_HEADERS: 'true' }, logStream });
  });
  after(() => t.close());

  async function outboxFile(deadlineMs = 10_000): Promise<string> {
    const dir = outboxDir(t.config.dataDir);
    for (const started = Date.now(); Date.now() - started < deadlineMs; await sleep(25)) {
      const files = (() => {
        try {
          return readdirSync(dir);
        } catch {
          return [];
        }
      })();
      const message = files.find((f) => f.endsWith('.eml'));
      if (message) return path.join(dir, message);
    }
    throw new Error('no message reached the outbox');
  }

  it('leaves the reset mail in DATA_DIR/outbox, and its link sets the password', async () => {
    const user = await createUser(t.db, { scope: 'system' });
    // An address of its own: the request limit is shared by every test on the run's database.
    const address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const forgot = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password/forgot', headers: { 'x-forwarded-for': address }, payload: { email: user.email } });
    assert.equal(forgot.statusCode, 202, forgot.body);
    const raw = readFileSync(await outboxFile());
    const mail = await simpleParser(raw);
    const to = [mail.to ?? []].flat()[0]!.value[0]!.address;
    assert.equal(to, user.email);
    const link = /https:\/\/console\.example\.test\/reset-password#token=(pwr_[A-Za-z0-9_-]+)/;
    const token = link.exec(mail.text ?? '')?.[1];
    assert.ok(token, mail.text);
    // The file itself shows the link whole, in both parts (no quoted-printable `=3D` or soft breaks),
    // for whoever reads the outbox without a MIME parser.
    const inFile = [...raw.toString('utf8').matchAll(new RegExp(link, 'g'))].map((m) => m[1]);
    assert.ok(inFile.length >= 2 && inFile.every((found) => found === token), raw.toString('utf8'));
    assert.ok(typeof mail.html === 'string' && mail.html.includes(token), 'the HTML part carries the link');
    const reset = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password/reset', payload: { token, password: 'from-the-outbox' } });
    assert.equal(reset.statusCode, 200, reset.body);
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: 'from-the-outbox' } });
    assert.equal(login.statusCode, 200, login.body);
    // The operator sees that a message was written, and to whom; never the link.
    await sleep(50); // pino's asynchronous destination
    assert.match(logged, /Reset your Device Management password/);
    assert.ok(!logged.includes(token), 'the token stays out of the logs');
  });
});
