// A real rsyslogd for syslog delivery tests: one plain TCP and one TLS (gtls) listener on
// 127.0.0.1, everything received written raw, one message per line, to a file in a temp dir.
// It loads no system inputs (imuxsock, imklog) and touches nothing outside its temp dir.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { stopChild } from './child-process.js';

const run = promisify(execFile);

export interface Rsyslog {
  tcpPort: number;
  tlsPort: number;
  /** PEM of the CA that signed the TLS listener's certificate (SANs 127.0.0.1 and localhost). */
  caCertificate: string;
  /** Every message received so far, raw (without the octet count), in arrival order. */
  messages(): Promise<string[]>;
  /** Waits until at least `count` messages arrived, and returns them all. */
  waitForMessages(count: number, timeoutMs?: number): Promise<string[]>;
  stop(): Promise<void>;
}

export const RSYSLOG_MISSING = 'rsyslogd with its GnuTLS driver is not installed (apt-get install rsyslog rsyslog-gnutls)';

function findExecutable(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return path.join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

/** rsyslogd's path, or null when it or its TLS driver (Debian's rsyslog-gnutls) is not installed. */
export function rsyslogdPath(): string | null {
  const binary = findExecutable('rsyslogd');
  const libDirs = ['/usr/lib', '/usr/lib64', ...readdirSync('/usr/lib').filter((d) => d.endsWith('-linux-gnu')).map((d) => `/usr/lib/${d}`)];
  const gtls = libDirs.some((dir) => existsSync(path.join(dir, 'rsyslog', 'lmnsd_gtls.so')));
  return binary && gtls ? binary : null;
}

async function makeCertificates(dir: string): Promise<void> {
  const file = (name: string) => path.join(dir, name);
  await writeFile(
    file('ca.cnf'),
    ['[req]', 'distinguished_name = dn', 'prompt = no', 'x509_extensions = ca_ext', '[dn]', 'CN = dms test syslog CA',
      '[ca_ext]', 'basicConstraints = critical,CA:TRUE', 'keyUsage = critical,keyCertSign,cRLSign', 'subjectKeyIdentifier = hash', ''].join('\n'),
  );
  await writeFile(
    file('server.cnf'),
    ['[req]', 'distinguished_name = dn', 'prompt = no', '[dn]', 'CN = 127.0.0.1', '[server_ext]',
      'subjectAltName = IP:127.0.0.1,DNS:localhost', 'basicConstraints = critical,CA:FALSE', 'keyUsage = critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage = serverAuth', 'subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid,issuer', ''].join('\n'),
  );
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', ['req', '-x509', '-new', '-config', file('ca.cnf'), ...key, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2']);
  await run('openssl', ['req', '-new', '-config', file('server.cnf'), ...key, '-keyout', file('server.key'), '-out', file('server.csr')]);
  await run('openssl', ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'),
    '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '2', '-extfile', file('server.cnf'), '-extensions', 'server_ext', '-out', file('server.pem')]);
}

function config(dir: string, tcpPort: number, tlsPort: number): string {
  const file = (name: string) => path.join(dir, name);
  return `
global(
  processInternalMessages="on"
  workDirectory="${file('work')}"
  maxMessageSize="64k"
  defaultNetstreamDriverCAFile="${file('ca.pem')}"
  defaultNetstreamDriverCertFile="${file('server.pem')}"
  defaultNetstreamDriverKeyFile="${file('server.key')}"
)
module(load="imtcp")
template(name="raw" type="string" string="%rawmsg%\\n")
ruleset(name="received") {
  action(type="omfile" file="${file('messages.log')}" template="raw")
}
input(type="imtcp" address="127.0.0.1" port="${tcpPort}" ruleset="received")
input(type="imtcp" address="127.0.0.1" port="${tlsPort}" ruleset="received"
      streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
# rsyslogd's own messages (kept here, not sent to the system log), to explain a failed start
*.* action(type="omfile" file="${file('rsyslogd.log')}")
`;
}

/** Whether the port accepts a connection (and, given a CA, completes a verified TLS handshake). */
function canConnect(port: number, ca?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const onConnect = () => {
      socket.end();
      resolve(true);
    };
    const socket = ca
      ? tls.connect({ host: '127.0.0.1', port, ca }, onConnect)
      : net.connect({ host: '127.0.0.1', port }, onConnect);
    socket.on('error', () => resolve(false));
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').slice(0, -1);
}

export async function startRsyslog(): Promise<Rsyslog> {
  const binary = rsyslogdPath();
  if (!binary) throw new Error(RSYSLOG_MISSING);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dms-rsyslog-'));
  let child: ChildProcess | undefined;
  let output = '';
  let exited = false;

  const stop = async () => {
    await stopChild(child, exited);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await makeCertificates(dir);
    await mkdir(path.join(dir, 'work'));
    const tcpPort = await freePort();
    let tlsPort = await freePort();
    while (tlsPort === tcpPort) tlsPort = await freePort();
    await writeFile(path.join(dir, 'rsyslog.conf'), config(dir, tcpPort, tlsPort));

    child = spawn(binary, ['-n', '-f', path.join(dir, 'rsyslog.conf'), '-i', path.join(dir, 'rsyslogd.pid')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A test process that dies without stop() must not leave rsyslogd behind.
    const killOnExit = () => child?.kill('SIGKILL');
    process.once('exit', killOnExit);
    child.on('exit', () => {
      exited = true;
      process.off('exit', killOnExit);
    });

    const caCertificate = await readFile(path.join(dir, 'ca.pem'), 'utf8');
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (exited) throw new Error(`rsyslogd exited at start:\n${output}`);
      if ((await canConnect(tcpPort)) && (await canConnect(tlsPort, caCertificate))) break;
      if (Date.now() > deadline) throw new Error(`rsyslogd did not listen within 15 s:\n${output}`);
      await sleep(100);
    }

    const messagesFile = path.join(dir, 'messages.log');
    return {
      tcpPort,
      tlsPort,
      caCertificate,
      messages: () => readLines(messagesFile),
      async waitForMessages(count, timeoutMs = 10_000) {
        const until = Date.now() + timeoutMs;
        for (;;) {
          const lines = await readLines(messagesFile);
          if (lines.length >= count) return lines;
          if (Date.now() > until) {
            const own = await readFile(path.join(dir, 'rsyslogd.log'), 'utf8').catch(() => '');
            throw new Error(`expected ${count} messages, rsyslog has ${lines.length}; its log:\n${own}${output}`);
          }
          await sleep(50);
        }
      },
      stop,
    };
  } catch (err) {
    const own = await readFile(path.join(dir, 'rsyslogd.log'), 'utf8').catch(() => '');
    await stop();
    if (own && err instanceof Error) err.message += `\nrsyslogd's log:\n${own}`;
    throw err;
  }
}
