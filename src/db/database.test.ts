// The database layer on both backends: migrations, the RLS contract, tenant isolation enforced by
// PostgreSQL itself, and the refusal to run as a role that bypasses RLS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database, type Queryable } from './database.js';
import { readTenant, SYSTEM_SCOPE, withTenant, type TenantScope } from './tenant-scope.js';
import { backends, openTestDatabase } from '../../test/support/app.js';
import { createOrg, createPartner, createSite, createUser } from '../../test/support/factory.js';

for (const backend of backends()) {
  describe(`database on ${backend}`, () => {
    let db: Database;
    before(async () => {
      db = await openTestDatabase(backend);
    });
    after(() => db.close());

    it('forces row-level security on every table with an org_id column', async () => {
      const { rows } = await withTenant(db, SYSTEM_SCOPE, (tx) =>
        tx.query<{ table_name: string; rls: boolean; forced: boolean }>(
          `select c.relname as table_name, c.relrowsecurity as rls, c.relforcerowsecurity as forced
             from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'public' and c.relkind in ('r', 'p')
              and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'org_id' and not a.attisdropped)`,
        ),
      );
      assert.ok(rows.length >= 2, 'expected tenant tables with org_id');
      const unprotected = rows.filter((r) => !r.rls || !r.forced).map((r) => r.table_name);
      assert.deepEqual(unprotected, [], `tables with org_id but without forced RLS: ${unprotected.join(', ')}`);
    });

    it('runs every transaction as the application role, which cannot bypass RLS', async () => {
      const role = await withTenant(db, SYSTEM_SCOPE, async (tx) => {
        const { rows } = await tx.query<{ current_user: string; rolsuper: boolean; rolbypassrls: boolean }>(
          `select current_user, r.rolsuper, r.rolbypassrls from pg_roles r where r.rolname = current_user`,
        );
        return rows[0]!;
      });
      assert.deepEqual(role, { current_user: 'dms_app', rolsuper: false, rolbypassrls: false });
    });

    it('shows a tenant only its own rows and refuses writes into another tenant', async () => {
      const partner = await createPartner(db);
      const mine = await createOrg(db, partner.id);
      const theirs = await createOrg(db, (await createPartner(db)).id);
      const mySite = await createSite(db, mine.id);
      const theirSite = await createSite(db, theirs.id);
      const scope: TenantScope = { scope: 'organization', partnerId: partner.id, orgIds: [mine.id] };

      const visible = await withTenant(db, scope, async (tx) => {
        const { rows } = await tx.query<{ id: string }>(`select id from sites where id = any($1::uuid[])`, [[mySite.id, theirSite.id]]);
        return rows.map((r) => r.id);
      });
      assert.deepEqual(visible, [mySite.id]);

      const updated = await withTenant(db, scope, (tx) => tx.query(`update sites set name = 'hijacked' where id = $1`, [theirSite.id]));
      assert.equal(updated.rowCount, 0);

      await assert.rejects(
        withTenant(db, scope, (tx) => tx.query(`insert into sites (org_id, name) values ($1, 'planted')`, [theirs.id])),
        /row-level security/,
      );
      // Without any scope set, nothing is visible at all.
      const bare = await db.transaction((tx) => tx.query(`select id from sites where id = $1`, [mySite.id]));
      assert.equal(bare.rowCount, 0);
    });

    it('lets a partner scope with allOrgs see organizations created after the scope was computed', async () => {
      const partner = await createPartner(db);
      const other = await createPartner(db);
      const scope: TenantScope = { scope: 'partner', partnerId: partner.id, orgIds: [], allOrgs: true };
      const created = await withTenant(db, scope, async (tx) => {
        const { rows } = await tx.query<{ id: string }>(
          `insert into organizations (partner_id, name, slug) values ($1, 'New', $2) returning id`,
          [partner.id, `new-${randomBytes(4).toString('hex')}`],
        );
        return rows[0]!.id;
      });
      assert.ok(created);
      await assert.rejects(
        withTenant(db, scope, (tx) =>
          tx.query(`insert into organizations (partner_id, name, slug) values ($1, 'Foreign', 'foreign')`, [other.id]),
        ),
        /row-level security/,
      );
    });

    it('keeps users of other tenants out of reach', async () => {
      const partner = await createPartner(db);
      const org = await createOrg(db, partner.id);
      const otherOrg = await createOrg(db, partner.id);
      const own = await createUser(db, { scope: 'organization', orgId: org.id });
      const foreign = await createUser(db, { scope: 'organization', orgId: otherOrg.id });
      const system = await createUser(db, { scope: 'system' });
      const scope: TenantScope = { scope: 'organization', partnerId: partner.id, orgIds: [org.id] };
      const seen = await withTenant(db, scope, async (tx) => {
        const { rows } = await tx.query<{ id: string }>(`select id from users where id = any($1::uuid[])`, [[own.id, foreign.id, system.id]]);
        return rows.map((r) => r.id);
      });
      assert.deepEqual(seen, [own.id]);
    });

    it('sets the tenant scope with BEGIN, as parameters: a hostile value is data, never SQL (PGlite writes it in escaped)', async () => {
      const partnerId = '11111111-1111-4111-8111-111111111111';
      const scope: TenantScope = { scope: 'organization', partnerId, orgIds: ['22222222-2222-4222-8222-222222222222'] };
      const read = (tenant: TenantScope) => withTenant(db, tenant, async (tx) => {
        const { rows } = await tx.query<{ scope: string; org_ids: string; partner: string }>(
          `select current_setting('app.scope') as scope, current_setting('app.org_ids') as org_ids, current_setting('app.partner_id') as partner`,
        );
        return rows[0]!;
      });
      assert.deepEqual(await read(scope), { scope: 'organization', org_ids: '{22222222-2222-4222-8222-222222222222}', partner: partnerId });
      const hostile = `x', true); select pg_sleep(1); --`;
      const started = performance.now();
      assert.equal((await read({ ...scope, partnerId: hostile })).partner, hostile);
      assert.ok(performance.now() - started < 900, 'the hostile value ran as SQL');
    });

    it('runs statements queued by queryLater in order, before the next statement or the commit, and fails the transaction when one fails', async () => {
      const org = await createOrg(db, (await createPartner(db)).id);
      const name = `queued-${randomBytes(4).toString('hex')}`;
      const insert = `insert into sites (org_id, name) values ($1, $2)`;
      const count = async (suffix: string) => (await withTenant(db, SYSTEM_SCOPE, (tx) =>
        tx.query<{ n: number }>(`select count(*)::int as n from sites where name = $1`, [`${name}-${suffix}`]))).rows[0]!.n;

      const seenInside = await withTenant(db, SYSTEM_SCOPE, async (tx) => {
        tx.queryLater(insert, [org.id, `${name}-a`]);
        const { rows } = await tx.query<{ n: number }>(`select count(*)::int as n from sites where name = $1`, [`${name}-a`]);
        tx.queryLater(insert, [org.id, `${name}-b`]); // goes out with the COMMIT
        return rows[0]!.n;
      });
      assert.equal(seenInside, 1, 'the queued statement ran before the next one');
      assert.equal(await count('a'), 1);
      assert.equal(await count('b'), 1);

      // Its only statement queued: BEGIN, the statement and COMMIT go out together.
      await withTenant(db, SYSTEM_SCOPE, async (tx) => tx.queryLater(insert, [org.id, `${name}-c`]));
      assert.equal(await count('c'), 1);

      // Failing with the COMMIT: the commit throws its error and nothing of the transaction stays.
      await assert.rejects(withTenant(db, SYSTEM_SCOPE, async (tx) => {
        await tx.query(insert, [org.id, `${name}-d`]);
        tx.queryLater(insert, [randomUUID(), `${name}-e`]);
      }), /foreign key/);
      assert.equal(await count('d'), 0);
      // Failing ahead of the next statement: that statement throws the queued one's error.
      await assert.rejects(withTenant(db, SYSTEM_SCOPE, async (tx) => {
        tx.queryLater(insert, [randomUUID(), `${name}-f`]);
        await tx.query(insert, [org.id, `${name}-g`]);
      }), /foreign key/);
      assert.equal(await count('g'), 0);
      // The transaction failed before its end: what was queued is never sent.
      await assert.rejects(withTenant(db, SYSTEM_SCOPE, async (tx) => {
        tx.queryLater(insert, [org.id, `${name}-h`]);
        throw new Error('the route failed');
      }), /the route failed/);
      assert.equal(await count('h'), 0);
    });
  });
}

describe('start-up safety', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('applies migrations once when two instances start on an empty database at the same time', async () => {
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    const name = `dms_migrate_${randomBytes(5).toString('hex')}`;
    await admin.query(`create database ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    try {
      const [a, b] = await Promise.all([
        openDatabase({ url: url.toString(), pgliteDir: 'memory://', poolSize: 2 }),
        openDatabase({ url: url.toString(), pgliteDir: 'memory://', poolSize: 2 }),
      ]);
      const { rows } = await withTenant(a, SYSTEM_SCOPE, (tx) => tx.query<{ n: number }>(`select count(*)::int as n from schema_migrations`));
      const files = (await import('./migrate.js')).readMigrations(new URL('../../migrations', import.meta.url).pathname);
      assert.equal(rows[0]!.n, files.length);
      await Promise.all([a.close(), b.close()]);
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  it('refuses to run as a role that bypasses row-level security', async () => {
    await assert.rejects(
      openDatabase({ url: process.env.TEST_DATABASE_URL!, pgliteDir: 'memory://', poolSize: 1, appRole: 'postgres' }),
      /refusing to start: database login "postgres" \(DATABASE_APP_URL\) is a superuser, which bypasses row-level security/,
    );
    await assert.rejects(
      openDatabase({ url: null, pgliteDir: 'memory://', poolSize: 1, appRole: 'postgres' }),
      /bypasses row-level security/,
    );
  });

  it('refuses to start when DATABASE_URL cannot be reached', async () => {
    await assert.rejects(
      openDatabase({ url: 'postgres://postgres@127.0.0.1:1/nowhere', pgliteDir: 'memory://', poolSize: 1 }),
      /cannot connect to DATABASE_URL/,
    );
  });
});

describe('statements and round trips on PostgreSQL', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let db: Database;
  before(async () => {
    db = await openDatabase({ url: process.env.TEST_DATABASE_URL!, pgliteDir: 'memory://', poolSize: 1 });
  });
  after(() => db.close());

  const prepared = (tx: Queryable) =>
    tx.query(`select statement from pg_prepared_statements where from_sql = false`);

  it('prepares every statement once per connection, unless told not to', async () => {
    const marker = `p${randomBytes(4).toString('hex')}`;
    const statements = await withTenant(db, SYSTEM_SCOPE, async (tx) => {
      for (let i = 0; i < 3; i++) await tx.query(`select $1::text as ${marker}`, ['x']);
      await tx.query(`select $1::text as ${marker}_unnamed`, ['x'], { prepare: false });
      return ((await prepared(tx)).rows as { statement: string }[]).map((r) => r.statement);
    });
    assert.equal(statements.filter((s) => s.includes(`as ${marker}`) && !s.includes('_unnamed')).length, 1);
    assert.equal(statements.filter((s) => s.includes(`${marker}_unnamed`)).length, 0);
  });

  it('plans a prepared statement once, generically, and an unnamed one for its values', async () => {
    const marker = `g${randomBytes(4).toString('hex')}`;
    const { plans, unnamedMode } = await withTenant(db, SYSTEM_SCOPE, async (tx) => {
      for (let i = 0; i < 3; i++) await tx.query(`select count(*) as ${marker} from devices where org_id = $1`, [randomUUID()]);
      const { rows } = await tx.query<{ generic_plans: string; custom_plans: string }>(
        `select generic_plans, custom_plans from pg_prepared_statements where statement like $1`, [`%as ${marker} %`]);
      const unnamed = await tx.query<{ mode: string }>(`select current_setting('plan_cache_mode') as mode, $1::text`, ['x'], { prepare: false });
      return { plans: rows[0], unnamedMode: unnamed.rows[0]!.mode };
    });
    assert.deepEqual([Number(plans?.generic_plans), Number(plans?.custom_plans)], [3, 0]);
    assert.equal(unnamedMode, 'force_custom_plan');
    // The switch to custom plans ends with its transaction.
    const after = await withTenant(db, SYSTEM_SCOPE, (tx) => tx.query<{ mode: string }>(`select current_setting('plan_cache_mode') as mode`));
    assert.equal(after.rows[0]!.mode, 'force_generic_plan');
  });

  it('keeps the number of statements a connection prepares bounded', async () => {
    const count = await withTenant(db, SYSTEM_SCOPE, async (tx) => {
      for (let i = 0; i < 300; i++) await tx.query(`select ${i} as distinct_text`);
      const { rows } = await tx.query<{ n: number }>(`select count(*)::int as n from pg_prepared_statements where from_sql = false`);
      return rows[0]!.n;
    });
    // 256 of the callers' statements, and the few a transaction sends itself, prepared whatever the
    // bound: BEGIN, COMMIT, the scope, the switch to custom plans.
    assert.ok(count <= 256 + 4, `${count} statements prepared on one connection`);
  });

  it('runs each statement of a read with its scope, read only, in a transaction that ends with it', async () => {
    await assert.rejects(
      readTenant(db, SYSTEM_SCOPE, (tx) => tx.query(`insert into partners (name, slug) values ('x', $1)`, [`ro-${randomUUID()}`])),
      /read-only transaction/,
    );
    const orgId = randomUUID();
    const scoped: TenantScope = { scope: 'organization', partnerId: randomUUID(), orgIds: [orgId] };
    const seen = `select current_setting('app.org_ids', true) as orgs, current_setting('transaction_read_only') as ro,
      current_setting('plan_cache_mode') as plans, pg_backend_pid() as pid, now()::text as began`;
    type Seen = { orgs: string; ro: string; plans: string; pid: number; began: string };
    const [first, custom, last] = await readTenant(db, scoped, async (tx) => [
      (await tx.query<Seen>(seen)).rows[0]!,
      (await tx.query<Seen>(seen, [], { prepare: false })).rows[0]!,
      (await tx.query<Seen>(seen)).rows[0]!,
    ]);
    // Every statement has the scope and is read only; the switch to custom plans is its statement's alone.
    for (const row of [first, custom, last]) assert.deepEqual([row.orgs, row.ro], [`{${orgId}}`, 'on']);
    assert.deepEqual([first.plans, custom.plans, last.plans], ['force_generic_plan', 'force_custom_plan', 'force_generic_plan']);
    // Each statement is a transaction of its own (now() is the transaction's start).
    assert.notEqual(first.began, last.began);
    // A failed statement leaves nothing behind either: the next read on the one connection has its own scope.
    await assert.rejects(readTenant(db, scoped, (tx) => tx.query('select 1/0')), /division by zero/);
    const other: TenantScope = { scope: 'organization', partnerId: randomUUID(), orgIds: [randomUUID()] };
    const again = await readTenant(db, other, async (tx) => (await tx.query<Seen>(seen)).rows[0]!);
    assert.deepEqual([again.pid, again.orgs], [first.pid, `{${other.orgIds[0]}}`]);
    // Outside a read the connection has no scope, writes, and is idle, not idle in a transaction.
    const next = await db.transaction((tx) => tx.query<Seen>(seen));
    assert.deepEqual([next.rows[0]!.pid, next.rows[0]!.ro, next.rows[0]!.orgs], [first.pid, 'off', '']);
    await readTenant(db, scoped, (tx) => tx.query('select 1'));
    const owner = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL! });
    await owner.connect();
    try {
      const { rows } = await owner.query<{ state: string }>('select state from pg_stat_activity where pid = $1', [first.pid]);
      assert.equal(rows[0]?.state, 'idle');
    } finally {
      await owner.end();
    }
  });

  // BEGIN, the scope and the first statement go out in one write (pipelined): a failure anywhere in
  // it must still roll back, answer with its own error and leave the one connection clean.
  // Run three times: a connection's first transactions send BEGIN, the scope and queued statements
  // each on its own, which prepares them; later ones send them under the statement's one Sync.
  it('rolls back a pipelined BEGIN whose setup or first statement fails, and the connection serves the next transaction', async () => {
    await onOneNewConnection(async (db) => {
      for (let round = 0; round < 3; round++) await failedBeginsRollBack(db);
    });
  });

  /** A pool of one connection of its own: earlier tests filled the shared one's prepared statements up to the bound. */
  async function onOneNewConnection(fn: (db: Database) => Promise<void>) {
    const db = await openDatabase({ url: process.env.TEST_DATABASE_URL!, pgliteDir: 'memory://', poolSize: 1 });
    try {
      await fn(db);
    } finally {
      await db.close();
    }
  }

  async function failedBeginsRollBack(db: Database) {
    await assert.rejects(
      db.transaction((tx) => tx.query('select 1'), { setup: { text: `select set_config('role', $1, true)`, params: ['no_such_role'] } }),
      /role "no_such_role" does not exist/,
    );
    await assert.rejects(withTenant(db, SYSTEM_SCOPE, (tx) => tx.query('select 1/0')), /division by zero/);
    const scoped: TenantScope = { scope: 'organization', partnerId: randomUUID(), orgIds: [randomUUID()] };
    await assert.rejects(withTenant(db, scoped, async (tx) => {
      await tx.query(`select 1`);
      throw new Error('the route failed');
    }), /the route failed/);
    // Same connection (a pool of one): no transaction left open and no scope left behind.
    const { rows } = await db.transaction((tx) => tx.query<{ scope: string | null }>(
      `select current_setting('app.scope', true) as scope`));
    assert.ok(!rows[0]!.scope, `scope left behind: ${rows[0]!.scope}`);
    assert.equal(await withTenant(db, SYSTEM_SCOPE, async () => 'no statement'), 'no statement');
  }

  // A statement queued by queryLater goes out with the COMMIT: when it fails, the transaction must
  // end all the same (sent on its own, PostgreSQL answers that COMMIT with ROLLBACK; sent as the
  // COMMIT's prelude, the COMMIT does not run and the transaction is rolled back), the statements
  // before it undone, and the one connection clean. Three rounds, for the same reason as above.
  it('ends the transaction when a statement sent with its COMMIT fails, and the connection serves the next one', () => onOneNewConnection(async (db) => {
    const slug = `queued-fail-${randomUUID()}`;
    const partnersLike = async (pattern: string) =>
      withTenant(db, SYSTEM_SCOPE, async (tx) => (await tx.query<{ n: number }>(`select count(*)::int as n from partners where slug like $1`, [pattern])).rows[0]!.n);
    for (let round = 0; round < 3; round++) {
      await assert.rejects(withTenant(db, SYSTEM_SCOPE, async (tx) => {
        await tx.query(`select 1`);
        tx.queryLater(`insert into partners (name, slug) values ('Undone', $1)`, [`${slug}-${round}`]);
        tx.queryLater(`select 1/0`);
      }), /division by zero/);
      // Had the failed transaction been left open, this statement would run inside it and fail (25P02).
      const { rows } = await db.transaction((tx) => tx.query<{ scope: string | null }>(`select current_setting('app.scope', true) as scope`));
      assert.ok(!rows[0]!.scope, `scope left behind: ${rows[0]!.scope}`);
      assert.equal(await partnersLike(`${slug}-%`), 0, 'a statement sent ahead of the failed one was committed');
    }
    // And a queued statement that succeeds commits with its COMMIT, on the warm connection too.
    for (let round = 0; round < 2; round++) {
      await withTenant(db, SYSTEM_SCOPE, async (tx) => {
        await tx.query(`select 1`);
        tx.queryLater(`insert into partners (name, slug) values ('Kept', $1)`, [`${slug}-kept-${round}`]);
      });
    }
    assert.equal(await partnersLike(`${slug}-kept-%`), 2);
  }));
});
