// Site lists: JWT-authenticated GET /api/v1/orgs/sites?limit=50 for a partner user with 200
// organizations and 10,000 sites, against the bare route with the same body. Targets: >= 0.25x the
// bare requests/s at saturation; p99 under 20 ms (fixed-rate pass; saturation p99 reported too).
import pg from 'pg';
import { hashPassword } from '../src/identity/passwords.js';
import { compareWithBare, createDatabase, FIXED_RATE, signIn, startService, type Row } from './harness.js';

export const name = 'sites';

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const { service } = await startService(database.url);
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench MSP', 'bench-msp', 'active') returning id`);
    await admin.query(
      `with orgs as (
         insert into organizations (partner_id, name, slug)
         select $1, 'Customer ' || g, 'customer-' || g from generate_series(1, 200) g returning id)
       insert into sites (org_id, name, timezone) select o.id, 'Site ' || g, 'UTC' from orgs o, generate_series(1, 50) g`,
      [partner.id],
    );
    await admin.query('analyze');
    const email = 'tech@bench-msp.example';
    const password = 'bench-password-456';
    // Written directly: creating users through the API needs an MFA-verified session.
    await admin.query(
      `insert into users (email, name, password_hash, scope, partner_id, role, org_access) values ($1, 'Bench Tech', $2, 'partner', $3, 'technician', 'all')`,
      [email, await hashPassword(password), partner.id],
    );
    const token = await signIn(service.url, email, password);
    const url = `${service.url}/api/v1/orgs/sites?limit=50`;
    const page = (await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).json()) as { pagination: { total: number } };
    if (page.pagination.total !== 10_000) throw new Error(`expected 10,000 sites, the partner user sees ${page.pagination.total}`);

    const r = await compareWithBare('/orgs/sites', url, { authorization: `Bearer ${token}` });
    const ratio = Math.round((r.rps / r.bareRps) * 100) / 100;
    return [
      { name: 'sites: GET /orgs/sites?limit=50, partner of 200 orgs / 10,000 sites, 50 connections', figure: r.rps, unit: 'req/s', baseline: r.bareRps, ratio, target: '>= 0.25x bare', pass: ratio >= 0.25 },
      { name: `sites: p99 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p99, unit: 'ms', baseline: r.bareP99, ratio: null, target: '< 20 ms', pass: r.p99 < 20 },
      { name: `sites: p50 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p50, unit: 'ms', baseline: r.bareP50, ratio: null },
      { name: 'sites: p99 at 50 connections (queueing, information)', figure: r.satP99, unit: 'ms', baseline: r.bareSatP99, ratio: null },
    ];
  } finally {
    await admin.end();
    await service.stop();
    await database.drop();
  }
}
