// Configuration is parsed once and fails loudly, naming the variable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from './config.js';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'dms-config-'));
const secret = 'x'.repeat(40);

describe('configuration', () => {
  it('starts with no environment at all, using the API.md defaults', () => {
    const dir = tmp();
    const config = loadConfig({ DATA_DIR: dir });
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, null);
    assert.equal(config.redisUrl, null);
    assert.equal(config.trustProxyHeaders, false);
    assert.equal(config.enrollmentKeyDefaultTtlMinutes, 60);
    assert.equal(config.liveQueryTimeoutMs, 30000);
    assert.equal(config.logLevel, 'info');
  });

  it('generates missing secrets once, keeps them in DATA_DIR with mode 0600, and reuses them', () => {
    const dir = tmp();
    const first = loadConfig({ DATA_DIR: dir });
    const file = path.join(dir, 'secrets.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(first.jwtSecret.length >= 32);
    assert.notEqual(first.jwtSecret, first.enrollmentKeyPepper);
    const second = loadConfig({ DATA_DIR: dir });
    assert.equal(second.jwtSecret, first.jwtSecret);
    assert.equal(second.enrollmentKeyPepper, first.enrollmentKeyPepper);
    assert.ok(readFileSync(file, 'utf8').includes(first.jwtSecret));
  });

  it('refuses to start in production without JWT_SECRET, naming it', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: tmp() }), (err: Error) => err instanceof ConfigError && /JWT_SECRET/.test(err.message));
  });

  it('takes the pepper from the first of the four variables SPEC lists', () => {
    const base = { NODE_ENV: 'production', DATA_DIR: tmp(), JWT_SECRET: `jwt-${secret}` };
    assert.equal(loadConfig(base).enrollmentKeyPepper, `jwt-${secret}`);
    assert.equal(loadConfig({ ...base, SECRET_ENCRYPTION_KEY: `sek-${secret}` }).enrollmentKeyPepper, `sek-${secret}`);
    assert.equal(loadConfig({ ...base, SECRET_ENCRYPTION_KEY: `sek-${secret}`, APP_ENCRYPTION_KEY: `aek-${secret}` }).enrollmentKeyPepper, `aek-${secret}`);
    assert.equal(
      loadConfig({ ...base, APP_ENCRYPTION_KEY: `aek-${secret}`, ENROLLMENT_KEY_PEPPER: `pep-${secret}` }).enrollmentKeyPepper,
      `pep-${secret}`,
    );
  });

  it('rejects bad values with a message naming the variable', () => {
    const cases: Record<string, RegExp> = {
      PORT: /PORT/,
      DATABASE_URL: /DATABASE_URL/,
      REDIS_URL: /REDIS_URL/,
      TRUST_PROXY_HEADERS: /TRUST_PROXY_HEADERS/,
      LOG_LEVEL: /LOG_LEVEL/,
      ENROLLMENT_KEY_DEFAULT_TTL_MINUTES: /ENROLLMENT_KEY_DEFAULT_TTL_MINUTES/,
      LIVE_QUERY_TIMEOUT_MS: /LIVE_QUERY_TIMEOUT_MS/,
      JWT_SECRET: /JWT_SECRET must be at least 32/,
      BOOTSTRAP_ADMIN_EMAIL: /BOOTSTRAP_ADMIN_EMAIL/,
      OTEL_EXPORTER_OTLP_ENDPOINT: /OTEL_EXPORTER_OTLP_ENDPOINT/,
    };
    const bad: Record<string, string> = {
      PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      REDIS_URL: 'not a url',
      TRUST_PROXY_HEADERS: 'maybe',
      LOG_LEVEL: 'loud',
      ENROLLMENT_KEY_DEFAULT_TTL_MINUTES: '0',
      LIVE_QUERY_TIMEOUT_MS: '-5',
      JWT_SECRET: 'short',
      BOOTSTRAP_ADMIN_EMAIL: 'nobody',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
    };
    for (const [name, pattern] of Object.entries(cases)) {
      assert.throws(() => loadConfig({ DATA_DIR: tmp(), [name]: bad[name]! }), (err: Error) => err instanceof ConfigError && pattern.test(err.message), name);
    }
  });

  it('logs the service in as its own roles: from DATABASE_URL without the password, or as configured', () => {
    const owner = 'postgres://owner:s3cret@db.example:5433/dms?sslmode=require';
    assert.deepEqual(loadConfig({ DATA_DIR: tmp(), DATABASE_URL: owner }).databaseLogins, {
      app: 'postgres://dms_app@db.example:5433/dms?sslmode=require',
      sealer: 'postgres://dms_audit_sealer@db.example:5433/dms?sslmode=require',
      retention: 'postgres://dms_audit_retention@db.example:5433/dms?sslmode=require',
    });
    // A Unix socket named in ?host= has no place for a user before the host.
    assert.equal(loadConfig({ DATA_DIR: tmp(), DATABASE_URL: 'postgresql:///dms?host=/run/postgresql&user=owner&password=x' }).databaseLogins!.app,
      'postgresql:///dms?host=%2Frun%2Fpostgresql&user=dms_app');
    const app = 'postgres://dms_app:app-pw@db.example/dms';
    const logins = loadConfig({ DATA_DIR: tmp(), DATABASE_URL: owner, DATABASE_APP_URL: app }).databaseLogins!;
    assert.equal(logins.app, app);
    assert.equal(logins.retention, 'postgres://dms_audit_retention@db.example:5433/dms?sslmode=require');
    assert.equal(loadConfig({ DATA_DIR: tmp() }).databaseLogins, null);
    assert.throws(() => loadConfig({ DATA_DIR: tmp(), DATABASE_SEALER_URL: app }), /DATABASE_SEALER_URL needs DATABASE_URL/);
    assert.throws(() => loadConfig({ DATA_DIR: tmp(), DATABASE_URL: owner, DATABASE_RETENTION_URL: 'mysql://x' }), /DATABASE_RETENTION_URL/);
  });
});
