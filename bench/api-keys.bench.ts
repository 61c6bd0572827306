// The API-key hot path: API-key-authenticated GET /api/v1/auth/api-key (the cheapest key route: no database on
// a cached key) against the bare route with the same body, once with the in-process rate limiter
// and once with Redis. Targets: >= 0.5x bare (in-process), >= 0.35x (Redis); p99 < 5 ms
// (fixed-rate pass). Then exactly 100,000 requests with one key: usageCount must equal the
// number admitted. Requests rotate over 20 keys so no key reaches its 100,000/hour limit.
import pg from 'pg';
import { generateKey } from '../src/api-keys/key-material.js';
import { compareWithBare, createDatabase, FIXED_RATE, load, round, SATURATION_CONNECTIONS, startService, type Row } from './harness.js';

export const name = 'api-keys';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function createKeys(admin: pg.Client, orgId: string, count: number): Promise<{ id: string; key: string }[]> {
  const keys = [];
  for (let i = 0; i < count; i++) {
    const m = generateKey();
    const { rows } = await admin.query(
      `insert into api_keys (org_id, name, key_hash, key_prefix, scopes, rate_limit) values ($1, $2, $3, $4, '{*}', 100000) returning id`,
      [orgId, `bench key ${i}`, m.keyHash, m.keyPrefix],
    );
    keys.push({ id: rows[0].id as string, key: m.key });
  }
  return keys;
}

async function measure(label: string, env: Record<string, string>, target: number): Promise<Row[]> {
  const database = await createDatabase();
  const { service } = await startService(database.url, env);
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench MSP', 'bench-msp', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Customer', 'customer') returning id`, [partner.id]);
    const keys = await createKeys(admin, org.id, 20);
    const url = `${service.url}/api/v1/auth/api-key`;
    const r = await compareWithBare(`api-keys (${label})`, url, keys.map((k) => ({ 'x-api-key': k.key })));
    const ratio = round(r.rps / r.bareRps);
    const rows: Row[] = [
      { name: `api-keys: GET /auth/api-key (X-API-Key, ${label} limiter) at 50 connections`, figure: r.rps, unit: 'req/s', baseline: r.bareRps, ratio, target: `>= ${target}x bare`, pass: ratio >= target },
      { name: `api-keys (${label}): p99 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p99, unit: 'ms', baseline: r.bareP99, ratio: null, target: '< 5 ms', pass: r.p99 < 5 },
      { name: `api-keys (${label}): p50 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p50, unit: 'ms', baseline: r.bareP50, ratio: null },
      { name: `api-keys (${label}): p99 at 50 connections (queueing, information)`, figure: r.satP99, unit: 'ms', baseline: r.bareSatP99, ratio: null },
    ];

    // Exact usage: 100,000 requests with one fresh key, then the flushed count.
    const [counted] = await createKeys(admin, org.id, 1);
    const burst = await load(url, { connections: SATURATION_CONNECTIONS, amount: 100_000, headers: { 'x-api-key': counted!.key } });
    await new Promise((resolve) => setTimeout(resolve, 3000)); // flushed every second
    const { rows: [usage] } = await admin.query(`select usage_count::int as n from api_keys where id = $1`, [counted!.id]);
    rows.push({
      name: `api-keys (${label}): usageCount after 100,000 requests (admitted: ${burst.ok})`,
      figure: usage.n,
      unit: 'requests',
      baseline: burst.ok,
      ratio: null,
      target: '= admitted',
      pass: usage.n === burst.ok && burst.ok === 100_000,
    });
    return rows;
  } finally {
    await admin.end();
    await service.stop();
    await database.drop();
  }
}

export async function run(): Promise<Row[]> {
  return [...(await measure('in-process', {}, 0.5)), ...(await measure('Redis', { REDIS_URL }, 0.35))];
}
