// The only reader of process.env. Parsed once at start-up; a bad value stops the process with a
// message naming the variable (API.md §1).
import { randomBytes } from 'node:crypto';
import { openSync, readFileSync, writeSync, closeSync } from 'node:fs';
import { ensurePrivateDir } from './db/private-files.js';
import path from 'node:path';

export interface Config {
  nodeEnv: string;
  production: boolean;
  port: number;
  host: string;
  /** The schema owner: migrations only. null: embedded PGlite. */
  databaseUrl: string | null;
  /**
   * The service's own logins (DESIGN.md §3): requests, the audit sealer, audit retention. Each
   * defaults to DATABASE_URL with the user replaced by its role and no password; null with PGlite.
   */
  databaseLogins: { app: string; sealer: string; retention: string } | null;
  databasePoolSize: number;
  dataDir: string;
  redisUrl: string | null;
  jwtSecret: string;
  /** Server-side pepper for enrollment-key hashes (SPEC "Authentication" 13). */
  enrollmentKeyPepper: string;
  /** Key material for secrets kept encrypted at rest (TOTP seeds). */
  encryptionKey: string;
  bootstrapAdminEmail: string | null;
  bootstrapAdminPassword: string | null;
  trustProxyHeaders: boolean;
  allowPartnerSignup: boolean;
  /** Outbound event delivery may reach private, loopback and link-local addresses (API.md §9). */
  outboundAllowPrivate: boolean;
  /** Outgoing mail (API.md §10): smtp:// or smtps:// with credentials in the URL; null: DATA_DIR/outbox. */
  smtpUrl: string | null;
  mailFrom: string;
  /** The console's address, used in the links mails carry and as the SSO redirect's base (no trailing slash). */
  publicUrl: string;
  enrollmentKeyDefaultTtlMinutes: number;
  liveQueryTimeoutMs: number;
  logLevel: string;
  /** Ed25519 private key (PEM, PKCS#8) signing audit checkpoints; null: generated in DATA_DIR. */
  auditSigningKey: string | null;
  /** A checkpoint per chain every this many sealed rows… */
  auditCheckpointEveryRows: number;
  /** …or after this many minutes with new rows, whichever comes first. */
  auditCheckpointEveryMinutes: number;
  /** How often the retention worker runs (0: never; tests run it on demand). */
  auditRetentionIntervalMinutes: number;
  /** S3-compatible archive target; null: the filesystem under DATA_DIR/audit-archive. */
  auditArchiveS3: { bucket: string; endpoint: string | null; region: string; prefix: string } | null;
  /** Bearer token of GET /metrics; null: metrics are off (nothing is counted, /metrics answers 404). */
  metricsToken: string | null;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces are exported there (the SDK reads it and its other OTEL_* variables). */
  otlpEndpoint: string | null;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const PEPPER_VARIABLES = ['ENROLLMENT_KEY_PEPPER', 'APP_ENCRYPTION_KEY', 'SECRET_ENCRYPTION_KEY', 'JWT_SECRET'];
const MIN_SECRET_LENGTH = 32;

function value(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = value(env, name);
  if (raw === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

/** The roles the service logs in as; created by the migrations (0001, 0002), able to log in since 0009. */
export const DATABASE_ROLES = { app: 'dms_app', sealer: 'dms_audit_sealer', retention: 'dms_audit_retention' } as const;

/**
 * `url` logging in as `role` without a password: enough where the server trusts the connection
 * (trust, or a pg_ident map); with password authentication the operator sets the role's own URL.
 */
export function roleLoginUrl(url: string, role: string): string {
  const parsed = new URL(url);
  parsed.password = '';
  parsed.searchParams.delete('password');
  // A URL without a host (a Unix socket named in ?host=) cannot carry a user name before the host.
  if (parsed.host === '' || parsed.searchParams.has('user')) parsed.searchParams.set('user', role);
  else parsed.username = role;
  return parsed.toString();
}

function databaseLogins(env: Env, ownerUrl: string | null): Config['databaseLogins'] {
  const given = {
    app: url(env, 'DATABASE_APP_URL', ['postgres:', 'postgresql:']),
    sealer: url(env, 'DATABASE_SEALER_URL', ['postgres:', 'postgresql:']),
    retention: url(env, 'DATABASE_RETENTION_URL', ['postgres:', 'postgresql:']),
  };
  if (ownerUrl === null) {
    const stray = Object.entries(given).find(([, v]) => v !== null);
    if (stray) throw new ConfigError(`DATABASE_${stray[0].toUpperCase()}_URL needs DATABASE_URL (the schema owner, for migrations)`);
    return null;
  }
  return {
    app: given.app ?? roleLoginUrl(ownerUrl, DATABASE_ROLES.app),
    sealer: given.sealer ?? roleLoginUrl(ownerUrl, DATABASE_ROLES.sealer),
    retention: given.retention ?? roleLoginUrl(ownerUrl, DATABASE_ROLES.retention),
  };
}

function secret(env: Env, name: string): string | undefined {
  const v = value(env, name);
  if (v !== undefined && v.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`${name} must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  return v;
}

type GeneratedSecrets = Record<'jwtSecret' | 'enrollmentKeyPepper' | 'encryptionKey', string>;

/**
 * Outside production, secrets that are not configured are generated once and kept in
 * DATA_DIR/secrets.json (mode 0600), so tokens and enrollment keys survive restarts.
 * Created with O_EXCL so two instances starting together agree on one file.
 */
function generatedSecrets(dataDir: string): GeneratedSecrets {
  const file = path.join(dataDir, 'secrets.json');
  ensurePrivateDir(dataDir);
  const fresh: GeneratedSecrets = {
    jwtSecret: randomBytes(48).toString('base64url'),
    enrollmentKeyPepper: randomBytes(48).toString('base64url'),
    encryptionKey: randomBytes(48).toString('base64url'),
  };
  try {
    const fd = openSync(file, 'wx', 0o600);
    writeSync(fd, JSON.stringify(fresh, null, 2));
    closeSync(fd);
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let stored: Partial<GeneratedSecrets>;
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<GeneratedSecrets>;
  } catch {
    throw new ConfigError(`${file} is not readable JSON; remove it to generate new secrets`);
  }
  for (const key of Object.keys(fresh) as (keyof GeneratedSecrets)[]) {
    if (typeof stored[key] !== 'string' || stored[key]!.length < MIN_SECRET_LENGTH) {
      throw new ConfigError(`${file} lacks a valid "${key}"; remove the file to generate new secrets`);
    }
  }
  return stored as GeneratedSecrets;
}

function mailFrom(env: Env): string {
  const from = value(env, 'MAIL_FROM') ?? 'Device Management <no-reply@localhost>';
  if (!/^[^\s@<>]+@[^\s@<>]+$|<[^\s@<>]+@[^\s@<>]+>$/.test(from) || /[\r\n]/.test(from)) {
    throw new ConfigError(`MAIL_FROM must be an e-mail address, or "Name <address>", got "${from}"`);
  }
  return from;
}

/** A host as it goes into a URL: IPv6 in brackets, the wildcard addresses as the loopback. */
function hostForUrl(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = value(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';
  const dataDir = path.resolve(value(env, 'DATA_DIR') ?? './data');

  const logLevel = value(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const jwtSecretEnv = secret(env, 'JWT_SECRET');
  const pepperEnv = PEPPER_VARIABLES.map((name) => secret(env, name)).find((v) => v !== undefined);
  const encryptionEnv = secret(env, 'APP_ENCRYPTION_KEY') ?? secret(env, 'SECRET_ENCRYPTION_KEY');
  if (production) {
    if (jwtSecretEnv === undefined) throw new ConfigError('JWT_SECRET is required when NODE_ENV=production');
    if (pepperEnv === undefined) {
      throw new ConfigError(`an enrollment key pepper is required when NODE_ENV=production: set ${PEPPER_VARIABLES[0]}`);
    }
  }
  const generated = jwtSecretEnv && pepperEnv && (encryptionEnv || production) ? null : generatedSecrets(dataDir);

  const email = value(env, 'BOOTSTRAP_ADMIN_EMAIL') ?? null;
  if (email !== null && !/^[^\s@]+@[^\s@]+$/.test(email)) {
    throw new ConfigError('BOOTSTRAP_ADMIN_EMAIL is not an e-mail address');
  }
  const bootstrapPassword = value(env, 'BOOTSTRAP_ADMIN_PASSWORD') ?? null;
  if (bootstrapPassword !== null && bootstrapPassword.length < 8) {
    throw new ConfigError('BOOTSTRAP_ADMIN_PASSWORD must be at least 8 characters');
  }

  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);

  return {
    nodeEnv,
    production,
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: value(env, 'HOST') ?? '127.0.0.1',
    databaseUrl,
    databaseLogins: databaseLogins(env, databaseUrl),
    // 10, measured (README, Benchmarks): on 2 cores the device list served 3-14% more at 10 than
    // at 20, and site writes the same; more connections only queue inside PostgreSQL.
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 500),
    dataDir,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    jwtSecret: jwtSecretEnv ?? generated!.jwtSecret,
    enrollmentKeyPepper: pepperEnv ?? generated!.enrollmentKeyPepper,
    // In production without a dedicated key, seeds are encrypted under a key derived from JWT_SECRET.
    encryptionKey: encryptionEnv ?? generated?.encryptionKey ?? `derived:${jwtSecretEnv}`,
    bootstrapAdminEmail: email,
    bootstrapAdminPassword: bootstrapPassword,
    trustProxyHeaders: boolean(env, 'TRUST_PROXY_HEADERS', false),
    allowPartnerSignup: boolean(env, 'ALLOW_PARTNER_SIGNUP', false),
    outboundAllowPrivate: boolean(env, 'OUTBOUND_ALLOW_PRIVATE', false),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: mailFrom(env),
    publicUrl: (url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://${hostForUrl(value(env, 'HOST') ?? '127.0.0.1')}:${integer(env, 'PORT', 3000, 0, 65535)}`).replace(/\/+$/, ''),
    enrollmentKeyDefaultTtlMinutes: integer(env, 'ENROLLMENT_KEY_DEFAULT_TTL_MINUTES', 60, 1, 525600),
    liveQueryTimeoutMs: integer(env, 'LIVE_QUERY_TIMEOUT_MS', 30000, 100, 600000),
    logLevel,
    auditSigningKey: value(env, 'AUDIT_SIGNING_KEY')?.replace(/\\n/g, '\n') ?? null,
    auditCheckpointEveryRows: integer(env, 'AUDIT_CHECKPOINT_EVERY_ROWS', 1000, 1, 10_000_000),
    auditCheckpointEveryMinutes: integer(env, 'AUDIT_CHECKPOINT_EVERY_MINUTES', 5, 1, 1440),
    auditRetentionIntervalMinutes: integer(env, 'AUDIT_RETENTION_INTERVAL_MINUTES', 60, 0, 10080),
    auditArchiveS3: value(env, 'AUDIT_ARCHIVE_S3_BUCKET')
      ? {
          bucket: value(env, 'AUDIT_ARCHIVE_S3_BUCKET')!,
          endpoint: url(env, 'AUDIT_ARCHIVE_S3_ENDPOINT', ['http:', 'https:']),
          region: value(env, 'AUDIT_ARCHIVE_S3_REGION') ?? 'us-east-1',
          prefix: value(env, 'AUDIT_ARCHIVE_S3_PREFIX') ?? 'audit-archive/',
        }
      : null,
    metricsToken: secret(env, 'METRICS_TOKEN') ?? null,
    otlpEndpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
  };
}
