// `npm run test:cluster` (not part of `npm test`: it runs alone, as its processes need the cores):
// three service processes on one fresh PostgreSQL database and the machine's Redis, behind
// Debian's nginx running deploy/nginx.conf, driven only over HTTP and WebSockets. It shows what
// issue 22 asks of scale-out: agents spread over the instances answer live queries sent through
// any of them; a revoked key is refused at once everywhere; one rate-limit window; one sealer per
// chain; and an instance killed with SIGKILL under load costs only its in-flight requests.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import WebSocket from 'ws';
import { startAgent, type RunningAgent } from '../../src/agent/agent.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { totpCode } from '../../src/identity/totp.js';
import { testRedisUrl } from '../support/app.js';
import { createDevice, createEnrollmentKey, createOrg, createPartner, createSite, createUser } from '../support/factory.js';
import { call, expectCall, NGINX, onInterrupt, sleep, startInstance, startNginx, tempDir, waitFor, type Instance, type Nginx } from './harness.js';
import { runLoad, summarise } from './load.js';

const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = await testRedisUrl();
async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
const pgReachable = await reachable(adminUrl);
const missing = !existsSync(NGINX) ? `no nginx at ${NGINX} (apt-get install --no-install-recommends nginx)`
  : !pgReachable ? `PostgreSQL is not reachable at ${adminUrl}` : redisUrl === null ? 'Redis is not reachable' : null;
if (missing && process.env.CI) throw new Error(`the cluster test needs ${missing}`);

const AGENTS = 6;

describe('scale-out: three instances on PostgreSQL + Redis behind nginx', { skip: missing ?? false }, () => {
  // The creation time in the name lets a later run drop what an interrupted one left behind.
  const dbName = `dms_cluster_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const dbUrl = Object.assign(new URL(adminUrl), { pathname: `/${dbName}` }).toString();
  const pepper = randomBytes(32).toString('hex');
  let db: Database;
  let owner: pg.Client;
  let redis: Redis;
  let instances: Instance[] = [];
  let nginx: Nginx;
  const agents: RunningAgent[] = [];
  const probes: WebSocket[] = [];
  /** The live-query relay's id of each instance (what a device's presence key in Redis holds). */
  const relayIds: string[] = [];
  let org: { id: string };
  let sites: { id: string }[];
  let token: string;

  /** Which instance holds the device's socket, by its presence key; null when none does. */
  const holder = async (deviceId: string) => {
    const id = await redis.get(`dms:agent-presence:${deviceId}`);
    const index = id === null ? -1 : relayIds.indexOf(id);
    return index === -1 ? null : index;
  };
  const apiKey = async (scopes: string[], rateLimit: number) =>
    (await expectCall(201, nginx.url, 'POST', '/api/v1/api-keys', { token, body: { orgId: org.id, name: `cluster ${randomBytes(3).toString('hex')}`, scopes, rateLimit } })) as { id: string; key: string };
  const usageCount = async (keyId: string) => (await expectCall(200, nginx.url, 'GET', `/api/v1/api-keys/${keyId}`, { token })).usageCount as number;
  const chain = async () => {
    const { rows: [row] } = await owner.query<{ entries: number; seals: number; top: number; pending: number; distinct_entries: number }>(
      `select (select count(*)::int from audit_entries where org_id = $1) as entries,
              (select count(*)::int from audit_seals where org_id = $1) as seals,
              (select count(distinct pending_order)::int from audit_seals where org_id = $1) as distinct_entries,
              (select coalesce(max(seq), 0)::int from audit_seals where org_id = $1) as top,
              (select count(*)::int from audit_pending where org_id = $1) as pending`, [org.id]);
    return row!;
  };
  /** Waits until the sealers have caught up, then checks the chain through the API and in the tables. */
  const assertChainSealedOnce = async () => {
    const verify = await waitFor('every entry sealed', async () => {
      const body = await expectCall(200, nginx.url, 'GET', `/api/v1/audit-logs/verify?orgId=${org.id}`, { token });
      return body.pending === 0 ? body : null;
    });
    const c = await chain();
    assert.equal(verify.valid, true, JSON.stringify(verify));
    assert.equal(c.pending, 0);
    assert.equal(c.seals, c.entries, 'one seal per entry');
    assert.equal(c.distinct_entries, c.entries, 'no entry sealed twice');
    assert.equal(c.top, c.entries, 'seq runs 1..n without a gap');
    assert.equal(verify.checked, c.entries, 'the verifier walked every entry');
    return c;
  };

  const dropDatabase = async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  };

  before(async () => {
    onInterrupt(() => spawnSync('psql', [adminUrl, '-qc', `drop database if exists ${dbName} with (force)`], { stdio: 'ignore', timeout: 10_000 }));
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const { rows: stale } = await admin.query<{ datname: string }>(`select datname from pg_database where datname ~ '^dms_cluster_[0-9]+_'`);
    for (const { datname } of stale) {
      if (Number(datname.split('_')[2]) < Date.now() / 1000 - 3600) await admin.query(`drop database if exists ${datname} with (force)`);
    }
    await admin.query(`create database ${dbName}`);
    await admin.end();
    db = await openDatabase({ url: dbUrl, pgliteDir: 'memory://', poolSize: 2 }); // migrates
    owner = new pg.Client({ connectionString: dbUrl });
    await owner.connect();
    redis = new Redis(redisUrl!);

    const partner = await createPartner(db);
    org = await createOrg(db, partner.id);
    sites = [await createSite(db, org.id), await createSite(db, org.id)];
    const user = await createUser(db, { scope: 'organization', orgId: org.id });

    // What every instance must share (docs/scale-out.md); only PORT and DATA_DIR differ.
    const env = {
      DATABASE_URL: dbUrl, REDIS_URL: redisUrl!, TRUST_PROXY_HEADERS: 'true', LOG_LEVEL: 'warn',
      JWT_SECRET: randomBytes(32).toString('hex'), ENROLLMENT_KEY_PEPPER: pepper, APP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      // No retention run in the middle of a count; a live query that hangs fails the test in 10 s, not 30.
      AUDIT_RETENTION_INTERVAL_MINUTES: '0', LIVE_QUERY_TIMEOUT_MS: '10000',
    };
    instances = await Promise.all([0, 1, 2].map((i) => startInstance(i, env)));
    nginx = await startNginx(instances.map((i) => i.port));

    // An MFA-verified session through nginx (API keys need one): enable TOTP, then sign in with the
    // next time step's code (the enabling code's step is spent; ±1 step is accepted).
    const first = await expectCall(200, nginx.url, 'POST', '/api/v1/auth/login', { body: { email: user.email, password: user.password } });
    const { secret } = (await expectCall(200, nginx.url, 'POST', '/api/v1/auth/mfa/setup', { token: first.accessToken as string })) as { secret: string };
    await expectCall(200, nginx.url, 'POST', '/api/v1/auth/mfa/enable', { token: first.accessToken as string, body: { code: totpCode(secret, Date.now()) } });
    const challenge = await expectCall(200, nginx.url, 'POST', '/api/v1/auth/login', { body: { email: user.email, password: user.password } });
    token = (await expectCall(200, nginx.url, 'POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: challenge.mfaToken, code: totpCode(secret, Date.now() + 30_000) } })).accessToken as string;

    // A probe socket straight to each instance tells which relay id is which instance.
    for (const instance of instances) {
      const device = await createDevice(db, org.id, { siteId: sites[0]!.id });
      const socket = new WebSocket(`ws://127.0.0.1:${instance.port}/api/v1/agents/${device.agentId}/ws`, { headers: { authorization: `Bearer ${device.authToken}` } });
      socket.on('error', () => {});
      probes.push(socket);
      relayIds.push(await waitFor('a probe presence', () => redis.get(`dms:agent-presence:${device.id}`)));
    }

    // Reference agents, enrolled through nginx, their WebSockets through nginx too.
    const stateDir = tempDir('dms-cluster-agents-');
    const enrollment = await createEnrollmentKey(db, org.id, { pepper, maxUsage: AGENTS });
    agents.push(...await Promise.all(Array.from({ length: AGENTS }, (_, i) => startAgent({
      server: nginx.url, enrollmentKey: enrollment.key, statePath: path.join(stateDir, `agent-${i}.json`),
      hostname: `cluster-agent-${i}`, sampleSeed: i + 1, log: () => {},
    }))));
    await Promise.all(agents.map((a) => a.connected()));
  });

  after(async () => {
    await Promise.allSettled(agents.map((a) => a.stop()));
    for (const socket of probes) socket.terminate();
    await nginx?.stop();
    await Promise.allSettled(instances.map((i) => i.stop()));
    redis?.disconnect();
    await owner?.end();
    await db?.close();
    await dropDatabase();
  });

  it('spreads agents over the instances; a live query sent through any instance reaches each of them', async (ctx) => {
    const held = await Promise.all(agents.map((a) => waitFor('agent presence', () => holder(a.deviceId).then((i) => (i === null ? null : { i })))));
    const counts = [0, 1, 2].map((i) => held.filter((h) => h.i === i).length);
    ctx.diagnostic(`agents per instance (least_conn through nginx): ${counts.join(' / ')}`);
    assert.ok(counts.every((n) => n > 0), `every instance holds an agent: ${counts.join('/')}`);

    // Every agent from every instance directly (two of three hops go through Redis), and through nginx.
    for (const agent of agents) {
      for (const base of [nginx.url, ...instances.map((i) => i.url)]) {
        const body = await expectCall(200, base, 'GET', `/api/v1/devices/${agent.deviceId}/live/eventlogs`, { token });
        assert.deepEqual((body.data as { name: string }[]).map((d) => d.name).sort(), ['Application', 'Security', 'Setup', 'System']);
      }
      const events = await expectCall(200, nginx.url, 'GET', `/api/v1/system-tools/devices/${agent.deviceId}/eventlogs/System/events?limit=5&level=error`, { token });
      assert.equal((events.data as unknown[]).length, 5);
      assert.ok((events.data as { level: string }[]).every((e) => e.level === 'error'));
    }
  });

  it('refuses a revoked key on the very next request, whichever instance serves it', async () => {
    // Revoked through nginx once, then through each instance in turn: the others must not serve
    // the key from their warm caches even once.
    for (const via of [nginx.url, ...instances.map((i) => i.url)]) {
      const key = await apiKey(['audit:read'], 1000);
      for (const base of [...instances.map((i) => i.url), nginx.url]) await expectCall(200, base, 'GET', '/api/v1/auth/api-key', { key: key.key });
      await expectCall(200, via, 'DELETE', `/api/v1/api-keys/${key.id}`, { token });
      for (const base of [...instances.map((i) => i.url), nginx.url, nginx.url, nginx.url]) {
        const refused = await expectCall(401, base, 'GET', '/api/v1/auth/api-key', { key: key.key });
        assert.equal(refused.code, 'API_KEY_INACTIVE', `${base} after a revoke through ${via}`);
      }
    }
  });

  it('shares one rate-limit window: exactly N successes across instances, then 429', async (ctx) => {
    const limit = 30;
    const key = await apiKey(['audit:read'], limit);
    const targets = [nginx.url, ...instances.map((i) => i.url)];
    const replies = await Promise.all(Array.from({ length: 48 }, (_, n) => call(targets[n % targets.length]!, 'GET', '/api/v1/auth/api-key', { key: key.key })));
    const ok = replies.filter((r) => r.status === 200).length;
    const limited = replies.filter((r) => r.status === 429);
    ctx.diagnostic(`rate limit ${limit}: ${ok} admitted, ${limited.length} refused, over 3 instances and nginx`);
    assert.equal(ok, limit);
    assert.equal(limited.length, 48 - limit);
    for (const r of limited) {
      assert.equal(r.body.code, 'RATE_LIMITED');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    }
    // Each instance flushes its own counts within a second; together they are exact.
    await waitFor('usage flushed', async () => (await usageCount(key.id)) === limit, 5000, 200);
  });

  it('seals every entry exactly once while all instances write to one chain at once', async (ctx) => {
    const key = await apiKey(['devices:read', 'devices:write'], 100_000);
    const devices = await Promise.all(Array.from({ length: 6 }, () => createDevice(db, org.id, { siteId: sites[0]!.id })));
    const before = await chain();
    const targets = [nginx.url, ...instances.map((i) => i.url)];
    const writes = 300;
    let next = 0;
    const worker = async () => {
      for (let n = next++; n < writes; n = next++) {
        await expectCall(200, targets[n % targets.length]!, 'PATCH', `/api/v1/devices/${devices[n % devices.length]!.id}`, { key: key.key, body: { siteId: sites[n % 2]!.id } });
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: 12 }, worker));
    const after = await assertChainSealedOnce();
    // One signing key (AUDIT_SIGNING_KEY shared): every instance serves the key its checkpoints verify against.
    const keys = await Promise.all(instances.map(async (i) => (await expectCall(200, i.url, 'GET', '/api/v1/audit-logs/public-key', { token })).keyId));
    assert.equal(new Set(keys).size, 1);
    ctx.diagnostic(`${writes} audited writes through 3 instances in ${Date.now() - started} ms; chain of ${after.entries} entries valid, each sealed once`);
    assert.equal(after.entries - before.entries, writes);
  });

  it('sees the client address only as nginx saw it, and refuses bodies over the service limits at nginx', async () => {
    const device = await createDevice(db, org.id, { siteId: sites[0]!.id });
    const key = await apiKey(['devices:write'], 1000);
    const spoofed = { 'x-forwarded-for': '203.0.113.9', 'x-client-ip': '198.51.100.7', 'true-client-ip': '198.51.100.8', 'x-real-ip': '192.0.2.1' };
    const lastIp = async () => (await owner.query<{ ip_address: string }>(
      `select ip_address from audit_entries where resource_id = $1 order by pending_order desc limit 1`, [device.id])).rows[0]!.ip_address;
    await expectCall(200, nginx.url, 'PATCH', `/api/v1/devices/${device.id}`, { key: key.key, body: { siteId: sites[1]!.id }, headers: spoofed });
    assert.equal(await lastIp(), '127.0.0.1', 'nginx overwrites what the client claims');
    // Why nginx must: an instance trusting proxy headers believes whatever reaches it.
    await expectCall(200, instances[0]!.url, 'PATCH', `/api/v1/devices/${device.id}`, { key: key.key, body: { siteId: sites[0]!.id }, headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(await lastIp(), '203.0.113.9');

    const big = (bytes: number) => JSON.stringify({ logs: 'x'.repeat(bytes) });
    const tooLarge = await call(nginx.url, 'PATCH', `/api/v1/devices/${device.id}`, { key: key.key, body: big(1_100_000) });
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.headers.get('content-type'), 'application/problem+json');
    assert.equal(tooLarge.body.code, 'PAYLOAD_TOO_LARGE');
    // Agent routes take 5 MiB: 2 MB passes nginx (the service then refuses the agent's token).
    assert.equal((await call(nginx.url, 'POST', `/api/v1/agents/${'a'.repeat(64)}/logs`, { token: 'x', body: big(2_000_000) })).status === 413, false);
    assert.equal((await call(nginx.url, 'POST', `/api/v1/agents/${'a'.repeat(64)}/logs`, { token: 'x', body: big(5_300_000) })).status, 413);
  });

  it('loses only the in-flight requests of an instance killed with SIGKILL under load', async (ctx) => {
    const key = await apiKey(['devices:read', 'devices:write'], 100_000);
    const devices = await Promise.all(Array.from({ length: 8 }, () => createDevice(db, org.id, { siteId: sites[0]!.id })));
    const held = await Promise.all(agents.map((a) => holder(a.deviceId)));
    const victim = instances[[0, 1, 2].sort((a, b) => held.filter((h) => h === b).length - held.filter((h) => h === a).length)[0]!]!;
    const orphans = agents.filter((_, i) => held[i] === victim.index);
    const victimAddress = `127.0.0.1:${victim.port}`;

    let killedAt = 0;
    const load = runLoad({ base: nginx.url, key: key.key, devices, sites, workers: 8, durationMs: 9000, onTick: async (elapsed) => {
      if (elapsed < 3000 || killedAt) return;
      killedAt = Date.now();
      await victim.kill();
    } });
    // Agents of the killed instance: when their socket is back (on another instance) and answers.
    await waitFor('the kill', async () => killedAt > 0, 15_000, 20);
    const reconnected = await Promise.all(orphans.map(async (agent) => {
      const at = await waitFor('the agent on a live instance', async () => {
        const h = await holder(agent.deviceId);
        return h !== null && h !== victim.index ? Date.now() : null;
      }, 40_000, 50);
      await waitFor('a live query answered', async () => (await call(nginx.url, 'GET', `/api/v1/devices/${agent.deviceId}/live/eventlogs`, { token })).status === 200, 20_000, 100);
      return { socket: at - killedAt, answering: Date.now() - killedAt };
    }));
    const results = await load;
    const diedAt = victim.exitedAt()!;
    const s = summarise(results, killedAt, diedAt);
    const log = nginx.accessLog().filter((l) => l.at >= killedAt - 10_000);
    const retried = log.filter((l) => l.upstreams.length > 1 && l.upstreams[0] === victimAddress);
    const failedAtNginx = log.filter((l) => l.status === 502);
    ctx.diagnostic(`load: ${s.total} requests (${s.writes.ok} writes, ${s.reads.ok} reads succeeded); killed instance ${victim.index} after 3 s; ` +
      `failed: ${s.writes.failed} writes, ${s.reads.failed} reads, all in flight at the kill; nginx retried ${retried.length} on another instance`);
    ctx.diagnostic(`agents of the killed instance: ${orphans.length}; sockets back after ${reconnected.map((r) => r.socket).join(', ')} ms, answering live queries after ${reconnected.map((r) => r.answering).join(', ')} ms`);

    assert.ok(orphans.length > 0, 'the killed instance held agents');
    assert.equal(s.reads.failed, 0, 'idempotent requests in flight are retried by nginx on another instance');
    assert.deepEqual(s.failedNotInFlight, [], 'every failure was in flight on the killed instance when it died');
    assert.equal(failedAtNginx.length, s.writes.failed + s.reads.failed, 'nginx logged each failure once, as a 502');
    assert.ok(failedAtNginx.every((l) => l.upstreams.at(-1) === victimAddress), 'only the killed instance failed requests');
    assert.ok(s.afterKill.ok > 100, `the others kept serving: ${s.afterKill.ok} successes after the kill`);
    assert.ok(reconnected.every((r) => r.answering < 15_000));

    // Every write that succeeded is in the chain, at most the failed ones besides; sealed once each.
    await assertChainSealedOnce();
    // Counted by action and device: the live queries above are audited in the same chain.
    const { rows } = await owner.query<{ written: number }>(
      `select count(*)::int as written from audit_entries where action = 'device.update' and resource_id = any($1::uuid[])`, [devices.map((d) => d.id)]);
    const written = rows[0]!.written;
    assert.ok(written >= s.writes.ok && written <= s.writes.ok + s.writes.failed, `${written} entries for ${s.writes.ok} successful writes (+${s.writes.failed} failed)`);

    // Usage. The shared window in Redis records every admission (one list entry each), and the same
    // atomic step counts it as usage there (src/api-keys/usage-recorder.ts): the survivors move the
    // counts to PostgreSQL every second, in batches added once each, including a batch the killed
    // instance had claimed and not settled (after its 30 s claim). So usageCount is exact.
    const admitted = await redis.llen(`dms:ratelimit:${key.id}:log`);
    const succeeded = s.writes.ok + s.reads.ok;
    assert.ok(admitted >= succeeded && admitted - succeeded <= s.writes.failed + retried.length, 'admissions: every success, plus at most the requests in flight on the killed instance');
    const settledAt = Date.now();
    await waitFor('usage equal to admissions', async () => (await usageCount(key.id)) === admitted, 45_000, 250);
    ctx.diagnostic(`usage: ${succeeded} successes, ${admitted} admissions in the shared window, usageCount equal after ${Date.now() - settledAt} ms`);
  });
});
