// `npm run test:cluster`, after the scale-out test (it stops the machine's PostgreSQL and Redis, so it
// runs alone, never beside `npm test`): two service processes on a fresh database, under a steady
// load of API-key writes and reads, while
//  - PostgreSQL is stopped and started again (pg_ctlcluster): every answer while it is down is a
//    503 problem+json with Retry-After, never a 500 or a hang; the service recovers by itself; no
//    write is half done (each device's site is what its last audit entry says); the chain is valid;
//  - Redis is stopped and started again: API keys are still limited (each instance on its own),
//    a live query for a device held by the other instance answers DEVICE_OFFLINE at once, never
//    hangs; everything shared comes back by itself once Redis does.
// Both servers are started again in after() whatever happened, with the commands the machine uses.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { startAgent, type RunningAgent } from '../../src/agent/agent.js';
import { openDatabase } from '../../src/db/database.js';
import { totpCode } from '../../src/identity/totp.js';
import { testRedisUrl } from '../support/app.js';
import { createDevice, createEnrollmentKey, createOrg, createPartner, createSite, createUser } from '../support/factory.js';
import { call, expectCall, onInterrupt, sleep, startInstance, tempDir, waitFor, type Instance } from './harness.js';

const run = promisify(execFile);
const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = await testRedisUrl();
const PG_VERSION = (() => {
  try {
    return readdirSync('/etc/postgresql')[0] ?? null;
  } catch {
    return null;
  }
})();
const REDIS_PORT = redisUrl ? new URL(redisUrl).port || '6379' : '6379';
const missing = PG_VERSION === null ? 'no local PostgreSQL cluster (/etc/postgresql) to stop and start'
  : redisUrl === null ? 'Redis is not reachable' : !new URL(adminUrl).hostname.match(/^(127\.0\.0\.1|localhost)$/) ? 'PostgreSQL is not local' : null;
if (missing && process.env.CI) throw new Error(`the fault tests need ${missing}`);

const pgIsReady = () => spawnSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']).status === 0;
const startPostgres = () => run('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION!, 'main', 'start']);
const stopPostgres = () => run('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION!, 'main', 'stop', '-m', 'fast']);
const redisIsUp = () => spawnSync('redis-cli', ['-p', REDIS_PORT, 'ping']).stdout?.toString().trim() === 'PONG';
const startRedis = () => run('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', REDIS_PORT, '--save', '', '--appendonly', 'no']);
const stopRedis = () => run('redis-cli', ['-p', REDIS_PORT, 'shutdown', 'nosave']).catch(() => {});
/** Synchronous: also from a signal handler, where nothing asynchronous finishes. */
function restoreServersSync(): void {
  if (PG_VERSION && !pgIsReady()) spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, 'main', 'start'], { timeout: 60_000 });
  if (!redisIsUp()) spawnSync('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', REDIS_PORT, '--save', '', '--appendonly', 'no'], { timeout: 10_000 });
}

interface Answer {
  kind: 'write' | 'read';
  start: number;
  end: number;
  /** 0: no HTTP answer at all (reset, or no answer within 15 s). */
  status: number;
  code: string | null;
  retryAfter: string | null;
  contentType: string | null;
}

/** Workers alternating a device move (audited) and a read, each on its own device, until `until()`. */
async function load(base: string, key: string, devices: string[], sites: string[], until: () => boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  const one = async (kind: Answer['kind'], device: string, site: string) => {
    const start = Date.now();
    const answer: Answer = { kind, start, end: 0, status: 0, code: null, retryAfter: null, contentType: null };
    try {
      const res = await fetch(`${base}/api/v1/devices/${device}`, kind === 'write'
        ? { method: 'PATCH', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ siteId: site }), signal: AbortSignal.timeout(15_000) }
        : { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(15_000) });
      const text = await res.text();
      Object.assign(answer, {
        status: res.status, retryAfter: res.headers.get('retry-after'), contentType: res.headers.get('content-type'),
        code: res.ok ? null : ((JSON.parse(text) as { code?: string }).code ?? null),
      });
    } catch {
      // status 0
    }
    answer.end = Date.now();
    answers.push(answer);
  };
  await Promise.all(devices.map(async (device, w) => {
    for (let n = 0; !until(); n++) {
      await one('write', device, sites[(n + w) % sites.length]!);
      await one('read', device, '');
    }
  }));
  return answers;
}

describe('faults: PostgreSQL and Redis going away under load', { skip: missing ?? false }, () => {
  const dbName = `dms_faults_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const dbUrl = Object.assign(new URL(adminUrl), { pathname: `/${dbName}` }).toString();
  const pepper = randomBytes(32).toString('hex');
  let instances: Instance[] = [];
  let agent: RunningAgent | null = null;
  let org: { id: string };
  let sites: string[];
  let devices: string[];
  let token: string;
  let key: string;

  before(async () => {
    onInterrupt(restoreServersSync);
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    // Closed before the service starts: only the service's connections live through the faults.
    const db = await openDatabase({ url: dbUrl, pgliteDir: 'memory://', poolSize: 1 });
    const partner = await createPartner(db);
    org = await createOrg(db, partner.id);
    sites = [(await createSite(db, org.id)).id, (await createSite(db, org.id)).id];
    devices = [];
    for (let i = 0; i < 6; i++) devices.push((await createDevice(db, org.id, { siteId: sites[0]! })).id);
    const user = await createUser(db, { scope: 'organization', orgId: org.id });
    const enrollment = await createEnrollmentKey(db, org.id, { pepper, maxUsage: 1 });
    await db.close();

    const env = {
      DATABASE_URL: dbUrl, REDIS_URL: redisUrl!, LOG_LEVEL: 'warn',
      JWT_SECRET: randomBytes(32).toString('hex'), ENROLLMENT_KEY_PEPPER: pepper, APP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      AUDIT_RETENTION_INTERVAL_MINUTES: '0', LIVE_QUERY_TIMEOUT_MS: '10000',
    };
    instances = await Promise.all([0, 1].map((i) => startInstance(i, env)));
    const [a] = instances;
    const first = await expectCall(200, a!.url, 'POST', '/api/v1/auth/login', { body: { email: user.email, password: user.password } });
    const { secret } = (await expectCall(200, a!.url, 'POST', '/api/v1/auth/mfa/setup', { token: first.accessToken as string })) as { secret: string };
    await expectCall(200, a!.url, 'POST', '/api/v1/auth/mfa/enable', { token: first.accessToken as string, body: { code: totpCode(secret, Date.now()) } });
    const challenge = await expectCall(200, a!.url, 'POST', '/api/v1/auth/login', { body: { email: user.email, password: user.password } });
    token = (await expectCall(200, a!.url, 'POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: challenge.mfaToken, code: totpCode(secret, Date.now() + 30_000) } })).accessToken as string;
    key = ((await expectCall(201, a!.url, 'POST', '/api/v1/api-keys', {
      token, body: { orgId: org.id, name: 'faults', scopes: ['devices:read', 'devices:write'], rateLimit: 100_000 },
    })) as { key: string }).key;

    // A reference agent on instance 0: a live query through instance 1 crosses Redis.
    agent = await startAgent({
      server: a!.url, enrollmentKey: enrollment.key, statePath: path.join(tempDir('dms-faults-agent-'), 'agent.json'),
      hostname: 'faults-agent', sampleSeed: 7, log: () => {},
    });
    await agent.connected();
  });

  after(async () => {
    restoreServersSync();
    await agent?.stop().catch(() => {});
    await Promise.allSettled(instances.map((i) => i.stop()));
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  });

  it('answers 503 with Retry-After while PostgreSQL is down, recovers by itself, and loses or halves no write', async (ctx) => {
    let stopAt = 0;
    let downAt = 0;
    let upAt = 0;
    let done = false;
    const loads = Promise.all(instances.map((i) => load(i.url, key, devices.slice(i.index * 3, i.index * 3 + 3), sites, () => done)));
    await sleep(2000);
    stopAt = Date.now();
    await stopPostgres();
    downAt = Date.now();
    await sleep(4000);
    // It accepts connections before pg_ctlcluster returns: "down" ends when the start is issued.
    const startingAt = Date.now();
    await startPostgres();
    upAt = Date.now();
    // Recovered: both instances answer writes again, by themselves.
    const recoveredIn = await waitFor('writes succeeding on both instances', async () => {
      const ok = await Promise.all(instances.map(async (i) =>
        (await call(i.url, 'PATCH', `/api/v1/devices/${devices[i.index * 3]}`, { key, body: { siteId: sites[0] } }).catch(() => null))?.status === 200));
      return ok.every(Boolean) ? Date.now() - upAt : null;
    }, 30_000, 200).catch((err: Error) => {
      done = true;
      const dead = instances.filter((i) => i.exitedAt() !== null).map((i) => `instance ${i.index} exited:\n${i.output().slice(-3000)}`);
      throw new Error(`${err.message}\n${dead.join('\n')}`);
    });
    await sleep(2000);
    done = true;
    const answers = (await loads).flat();

    const failed = answers.filter((a) => a.status !== 200);
    const during = answers.filter((a) => a.start >= downAt && a.end <= startingAt);
    ctx.diagnostic(`${answers.length} requests: ${answers.filter((a) => a.status === 200).length} answered 200, ${failed.length} answered ` +
      `${[...new Set(failed.map((a) => `${a.status} ${a.code}`))].join(', ')}; PostgreSQL stopped in ${downAt - stopAt} ms, down ${upAt - downAt} ms; ` +
      `writes succeeding again ${recoveredIn} ms after it was back`);
    const writesDuring = during.filter((a) => a.kind === 'write');
    ctx.diagnostic(`while it was down: ${writesDuring.length} writes and ${during.length - writesDuring.length} reads, answered ` +
      `${[...new Set(during.map((a) => a.status))].join(', ')}; started again in ${upAt - startingAt} ms`);
    assert.ok(during.length > 0 && during.every((a) => a.status === 503), 'every request while it was down answered 503');
    for (const a of failed) {
      assert.equal(a.status, 503, `a failure is a 503, never a 500 or no answer: ${JSON.stringify(a)}`);
      assert.equal(a.code, 'SERVICE_UNAVAILABLE');
      assert.match(a.contentType ?? '', /^application\/problem\+json/);
      assert.ok(Number(a.retryAfter) > 0, 'with Retry-After');
      assert.ok(a.end - a.start < 10_000, 'never a hang');
    }
    assert.ok(answers.some((a) => a.status === 200 && a.start > upAt), 'served again after the restart');

    // Nothing half written: each device's site is the one its last audit entry moved it to, and every
    // move that was answered 200 is in the chain.
    const owner = new pg.Client({ connectionString: dbUrl });
    await owner.connect();
    try {
      const { rows } = await owner.query<{ id: string; site_id: string; last: string | null; moves: number }>(
        `select d.id, d.site_id,
                (select e.details->'after'->>'siteId' from audit_entries e where e.resource_id = d.id and e.action = 'device.update' order by e.timestamp desc, e.id desc limit 1) as last,
                (select count(*)::int from audit_entries e where e.resource_id = d.id and e.action = 'device.update') as moves
           from devices d where d.id = any($1::uuid[])`, [devices]);
      for (const row of rows) if (row.last !== null) assert.equal(row.site_id, row.last, `device ${row.id}: its row and its last audit entry agree`);
      const moves = rows.reduce((n, r) => n + r.moves, 0);
      const writesOk = answers.filter((a) => a.kind === 'write' && a.status === 200).length;
      const writesFailed = answers.filter((a) => a.kind === 'write' && a.status !== 200).length;
      // + the two recovery probes of each waitFor round that succeeded (at most a few rounds).
      assert.ok(moves >= writesOk && moves <= writesOk + writesFailed + 60, `${moves} audited moves for ${writesOk} answered writes`);
    } finally {
      await owner.end();
    }
    const verify = await waitFor('the chain sealed', async () => {
      const body = await expectCall(200, instances[0]!.url, 'GET', `/api/v1/audit-logs/verify?orgId=${org.id}`, { token }).catch(() => null);
      return body?.pending === 0 ? body : null;
    }, 30_000, 500);
    assert.equal(verify.valid, true, JSON.stringify(verify));
  });

  it('keeps limiting API keys and never hangs a live query while Redis is down, and recovers by itself', async (ctx) => {
    const [a, b] = instances as [Instance, Instance];
    const live = (via: Instance) => call(via.url, 'GET', `/api/v1/devices/${agent!.deviceId}/live/eventlogs`, { token, timeoutMs: 20_000 });
    assert.equal((await live(b)).status, 200, 'through the other instance, over Redis');

    await stopRedis();
    await waitFor('Redis gone', async () => !redisIsUp());
    const stoppedAt = Date.now();
    try {
      // API keys: admitted on each instance from its own window (the limit holds per instance).
      for (const i of instances) assert.equal((await call(i.url, 'GET', `/api/v1/devices/${devices[0]}`, { key })).status, 200);
      const small = ((await expectCall(201, a.url, 'POST', '/api/v1/api-keys', {
        token, body: { orgId: org.id, name: 'small', scopes: ['devices:read'], rateLimit: 2 },
      })) as { key: string }).key;
      const codes = [];
      for (let n = 0; n < 3; n++) codes.push((await call(a.url, 'GET', `/api/v1/devices/${devices[0]}`, { key: small })).status);
      assert.deepEqual(codes, [200, 200, 429], 'still limited, in process');
      // Live queries: the socket's own instance answers; the other one cannot find the device.
      assert.equal((await live(a)).status, 200);
      const started = Date.now();
      const across = await live(b);
      const took = Date.now() - started;
      ctx.diagnostic(`Redis down: a live query across instances answered ${across.status} ${(across.body as { code?: string }).code} in ${took} ms`);
      assert.ok([409, 504].includes(across.status), `DEVICE_OFFLINE or AGENT_TIMEOUT, not ${across.status}`);
      assert.ok(['DEVICE_OFFLINE', 'AGENT_TIMEOUT'].includes(String((across.body as { code?: string }).code)));
      assert.ok(took < 11_000, 'never a hang: at most the live-query timeout');
    } finally {
      await startRedis();
    }
    await waitFor('Redis back', async () => redisIsUp());
    const backAt = Date.now();
    // Presence is written again by the instance holding the socket; the relay resubscribes.
    await waitFor('a live query across instances again', async () => (await live(b).catch(() => null))?.status === 200, 60_000, 500);
    ctx.diagnostic(`Redis down ${backAt - stoppedAt} ms; live queries across instances again ${Date.now() - backAt} ms after it was back`);
  });
});
