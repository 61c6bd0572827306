// Device lists: GET /api/v1/devices?limit=1 for one organization of 1,000 devices, against
// bare-db-read (bare Fastify + pg: one prepared primary-key SELECT of the same device, the same
// response body; pools of 20 on both sides) at 50 connections. Three callers: an X-API-Key with
// devices:read rotated over 20 keys, with the in-process rate limiter (>= 0.5x bare-db-read) and
// with Redis (>= 0.35x); and the organization admin's JWT (>= 0.5x). Each: p99 < 5 ms at the fixed
// rate; saturation p50/p99 as information.
import pg from 'pg';
import { generateKey } from '../src/api-keys/key-material.js';
import {
  compareRoutes,
  createDatabase,
  FIXED_RATE,
  round,
  SATURATION_CONNECTIONS,
  orgAdminToken,
  startBareDb,
  startService,
  type Comparison,
  type LoadHeaders,
  type Row,
} from './harness.js';

export const name = 'devices';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DEVICES = 1000;

/** A partner, one organization with one site and DEVICES devices (a third seen just now), 20 keys and the org's admin. */
export async function seed(admin: pg.Client) {
  const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench MSP', 'bench-msp', 'active') returning id`);
  const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Customer', 'customer') returning id`, [partner.id]);
  const { rows: [site] } = await admin.query(`insert into sites (org_id, name, timezone) values ($1, 'Head office', 'UTC') returning id`, [org.id]);
  await admin.query(
    `insert into devices (org_id, site_id, agent_id, auth_token_hash, hostname, os_type, os_version, architecture, agent_version,
                          last_seen_at, last_source_ip, enrolled_at, created_at, updated_at)
     select $1, $2, encode(sha256(('agent-' || g)::bytea), 'hex'), encode(sha256(('token-' || g)::bytea), 'hex'),
            'host-' || lpad(g::text, 4, '0'), (array['windows', 'macos', 'linux'])[1 + g % 3], '10.0.' || g, 'x86_64', '1.4.2',
            case g % 3 when 0 then now() when 1 then now() - interval '2 days' end, '10.1.' || (g / 256) || '.' || (g % 256),
            now() - g * interval '1 minute', now() - g * interval '1 minute', now() - g * interval '1 minute'
     from generate_series(1, $3::int) g`,
    [org.id, site.id, DEVICES],
  );
  const keys: string[] = [];
  for (let i = 0; i < 20; i++) {
    const m = generateKey();
    await admin.query(
      `insert into api_keys (org_id, name, key_hash, key_prefix, scopes, rate_limit) values ($1, $2, $3, $4, '{devices:read}', 100000)`,
      [org.id, `bench key ${i}`, m.keyHash, m.keyPrefix],
    );
    keys.push(m.key);
  }
  await admin.query('analyze');
  return { keyHeaders: keys.map((key) => ({ 'x-api-key': key })), partnerId: partner.id as string, orgId: org.id as string };
}

function rows(label: string, r: Comparison, target: number): Row[] {
  const ratio = round(r.rps / r.bareRps);
  return [
    { name: `devices: GET /devices?limit=1 (${label}) at ${SATURATION_CONNECTIONS} connections`, figure: r.rps, unit: 'req/s', baseline: r.bareRps, ratio, target: `>= ${target}x bare-db-read`, pass: ratio >= target },
    { name: `devices (${label}): p99 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p99, unit: 'ms', baseline: r.bareP99, ratio: null, target: '< 5 ms', pass: r.p99 < 5 },
    { name: `devices (${label}): p50 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p50, unit: 'ms', baseline: r.bareP50, ratio: null },
    { name: `devices (${label}): p50 at ${SATURATION_CONNECTIONS} connections (queueing, information)`, figure: r.satP50, unit: 'ms', baseline: r.bareSatP50, ratio: null },
    { name: `devices (${label}): p99 at ${SATURATION_CONNECTIONS} connections (queueing, information)`, figure: r.satP99, unit: 'ms', baseline: r.bareSatP99, ratio: null },
  ];
}

/** One service (with `env`) on a fresh database: the API-key caller, and the JWT caller when `jwt`. */
async function measure(limiter: string, env: Record<string, string>, keyTarget: number, jwt: boolean): Promise<Row[]> {
  const database = await createDatabase();
  const { service } = await startService(database.url, env);
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  let bare: Awaited<ReturnType<typeof startBareDb>> | undefined;
  try {
    const seeded = await seed(admin);
    const url = `${service.url}/api/v1/devices?limit=1`;
    const body = await (await fetch(url, { headers: seeded.keyHeaders[0] })).text();
    const page = JSON.parse(body) as { data: { id: string }[]; pagination: { total: number } };
    if (page.pagination.total !== DEVICES || !page.data[0]) throw new Error(`expected ${DEVICES} devices, the key sees ${body}`);
    bare = await startBareDb(database.url, { read: { body, table: 'devices', id: page.data[0].id } });
    const baseline = { url: `${bare.url}/bare-db-read?limit=1` };

    const compare = (label: string, headers: LoadHeaders) => compareRoutes(`devices (${label})`, { url, headers }, baseline);
    const out = rows(`X-API-Key, ${limiter} limiter`, await compare(`X-API-Key, ${limiter}`, seeded.keyHeaders), keyTarget);
    if (jwt) {
      const token = await orgAdminToken(admin, service.url, seeded.partnerId, seeded.orgId);
      const headers = { authorization: `Bearer ${token}` };
      const same = await (await fetch(url, { headers })).text();
      if (JSON.parse(same).pagination.total !== DEVICES) throw new Error(`the org admin sees ${same}`);
      out.push(...rows('JWT, org admin', await compare('JWT', headers), 0.5));
    }
    return out;
  } finally {
    await bare?.stop();
    await admin.end();
    await service.stop();
    await database.drop();
  }
}

export async function run(): Promise<Row[]> {
  return [...(await measure('in-process', {}, 0.5, true)), ...(await measure('Redis', { REDIS_URL }, 0.35, false))];
}
