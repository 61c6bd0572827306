// The database baselines: bare Fastify with `pg` on the service's database (DATABASE_URL), no auth,
// no RLS, no audit, no logging, one pg.Pool of 20 (issue 19's baselines; the service's default
// DATABASE_POOL_SIZE is 10).
// - GET /bare-db-read: one prepared (named) primary-key SELECT of row BARE_READ_ID of
//   BARE_READ_TABLE, answering BARE_READ_BODY (the service's response) with the row's values.
// - PATCH /bare-db-write/:id {name}: one transaction — BEGIN, one prepared INSERT of an audit-width
//   row into bare_audit_logs, COMMIT — answering BARE_WRITE_BODY with the id and name.
// - PATCH /bare-site-rename/:id {name}: for information, a site rename's own SQL (below).
// Started as its own process by the benches (harness startBareDb).
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
pool.on('error', () => {}); // an idle client dropped at shutdown must not crash the process

type Json = Record<string, unknown>;
const readBody = JSON.parse(process.env.BARE_READ_BODY ?? '{}') as Json;
const writeBody = JSON.parse(process.env.BARE_WRITE_BODY ?? '{}') as Json;
const readTable = process.env.BARE_READ_TABLE ?? 'devices';
const readId = process.env.BARE_READ_ID;
if (!/^[a-z_]+$/.test(readTable)) throw new Error(`bad BARE_READ_TABLE ${readTable}`);

// Same columns and types as audit_logs (migrations/0002_audit.sql), generated ones included, but
// no triggers, no RLS, no check, foreign-key or unique constraints: a primary key and the one
// index a reader by organization and time needs.
await pool.query(`
  create table if not exists bare_audit_logs (
    id uuid primary key,
    org_id uuid,
    chain_id uuid generated always as (coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)) stored,
    seq bigint,
    timestamp timestamptz(3) not null,
    actor_type text not null,
    actor_id uuid,
    actor_email varchar(255),
    action varchar(100) not null,
    resource_type varchar(50),
    resource_id uuid,
    resource_name varchar(255),
    details jsonb not null default '{}',
    ip_address varchar(45),
    user_agent text,
    result text not null,
    error_message text,
    prev_checksum varchar(128),
    checksum varchar(128),
    pending_order bigint generated always as identity
  );
  create index if not exists bare_audit_logs_org_time on bare_audit_logs (org_id, timestamp desc, id desc);`);

const INSERT = `insert into bare_audit_logs (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type,
  resource_id, resource_name, details, ip_address, user_agent, result, error_message)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`;
const ACTOR_ID = randomUUID();

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The template's fields, each taken from the row's column of the same (snake_case) name when it has one. */
function fromRow(template: Json, row: Json): Json {
  const out: Json = {};
  for (const [key, fallback] of Object.entries(template)) {
    const column = snake(key);
    const value = column in row ? row[column] : fallback;
    out[key] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));

if (readId) {
  app.get('/bare-db-read', async () => {
    const { rows } = await pool.query({ name: 'bare-db-read', text: `select * from ${readTable} where id = $1`, values: [readId] });
    if (!rows[0]) throw new Error(`no ${readTable} row ${readId}`);
    return Array.isArray(readBody.data) ? { ...readBody, data: [fromRow(readBody.data[0] as Json, rows[0])] } : fromRow(readBody, rows[0]);
  });
}

app.patch<{ Params: { id: string }; Body: { name: string } }>('/bare-db-write/:id', async (request) => {
  const { id } = request.params;
  const { name } = request.body;
  const now = new Date();
  const details = { changedFields: ['name'], before: { name: writeBody.name ?? null }, after: { name } };
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query({
      name: 'bare-db-write',
      text: INSERT,
      values: [randomUUID(), writeBody.orgId ?? null, now, 'user', ACTOR_ID, 'admin@bench.example', 'site.update', 'site', id, name, details, request.ip, request.headers['user-agent'] ?? null, 'success', null],
    });
    await client.query('COMMIT');
  } catch (err) {
    failed = err as Error;
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release(failed); // a client that failed is discarded, not reused
  }
  return { ...writeBody, id, name, updatedAt: now.toISOString() };
});

// The site rename's own SQL without the service around it: the same UPDATE (the site locked with
// its organization checked, its previous values returned) and the same audit entry into the real
// audit_entries (its indexes, queue trigger and foreign key; the service's sealer chains it), in
// one transaction, as the superuser: no row-level security, no tenant scope, no authentication.
const RENAME = `update sites as s set name = $2
    from (select s.id, s.name, s.address, s.timezone, s.contact, s.settings from sites s
            join organizations o on o.id = s.org_id and o.deleted_at is null where s.id = $1 for update of s) b
   where s.id = $1 and s.id = b.id
   returning s.id, s.org_id, s.name, s.address, s.timezone, s.contact, s.settings, s.created_at, s.updated_at,
             json_build_object('name', b.name, 'address', b.address, 'timezone', b.timezone, 'contact', b.contact, 'settings', b.settings) as before`;
const ENTRY = `insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type,
  resource_id, resource_name, details, ip_address, user_agent, result)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

app.patch<{ Params: { id: string }; Body: { name: string } }>('/bare-site-rename/:id', async (request) => {
  const { id } = request.params;
  const { name } = request.body;
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    await client.query('BEGIN');
    const { rows: [site] } = await client.query({ name: 'bare-site-rename', text: RENAME, values: [id, name] });
    if (!site) throw new Error(`no site ${id}`);
    const now = new Date();
    await client.query({
      name: 'bare-site-entry',
      text: ENTRY,
      values: [randomUUID(), site.org_id, now, 'user', ACTOR_ID, 'admin@bench.example', 'site.update', 'site', id, name,
        { changedFields: ['name'], before: { name: site.before.name }, after: { name } }, request.ip, request.headers['user-agent'] ?? null, 'success'],
    });
    await client.query('COMMIT');
    const { before: _before, ...after } = site;
    return fromRow(writeBody, after);
  } catch (err) {
    failed = err as Error;
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release(failed);
  }
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.on('SIGTERM', () => app.close().then(() => pool.end()).then(() => process.exit(0)));
