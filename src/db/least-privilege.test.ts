// Least privilege (DESIGN.md §3): requests log in as dms_app and nothing more. Start-up refuses a
// login that is a superuser, BYPASSRLS, the owner, or a member of another role (SET ROLE could climb
// to it); inside a request's transaction RESET ROLE and SET ROLE lead nowhere; and dms_app only
// reads the audit log's bookkeeping tables.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { connectPostgres, openDatabase, type Database } from './database.js';
import { SYSTEM_SCOPE, withTenant } from './tenant-scope.js';
import { RETENTION, SEALER, withAuditPrivilege } from '../audit/privilege.js';
import { backends, openTestDatabase } from '../../test/support/app.js';

const onPostgres = { skip: !process.env.TEST_DATABASE_URL };

/** The run's database, logging in as `user` (no password: the test server trusts local logins). */
function loginAs(user: string, options?: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.username = user;
  url.password = '';
  if (options) url.searchParams.set('options', options);
  return url.toString();
}

describe('start-up refuses a request login that could be more than dms_app', onPostgres, () => {
  let admin: pg.Client;
  const made: string[] = [];
  /** A throwaway login role (roles are cluster-wide: a random name, dropped afterwards). */
  async function role(attributes = ''): Promise<string> {
    const name = `dms_t_${randomBytes(5).toString('hex')}`;
    await admin.query(`create role ${name} login ${attributes}`);
    made.push(name);
    return name;
  }
  const start = (app: string) =>
    openDatabase({ url: process.env.TEST_DATABASE_URL!, logins: { app }, pgliteDir: 'memory://', poolSize: 1 });

  before(async () => {
    admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
  });
  after(async () => {
    for (const name of made) {
      await admin.query(`drop owned by ${name}`);
      await admin.query(`drop role ${name}`);
    }
    await admin.end();
  });

  it('refuses the owner switching roles (-c role=dms_app), which RESET ROLE would undo', async () => {
    await assert.rejects(start(loginAs(new URL(process.env.TEST_DATABASE_URL!).username, '-c role=dms_app')),
      /refusing to start: database login "postgres" \(DATABASE_APP_URL\) is a superuser/);
  });

  it('refuses a BYPASSRLS login', async () => {
    await assert.rejects(start(loginAs(await role('bypassrls'))), /bypasses row-level security/);
  });

  it('refuses a login that is a member of a role it could SET ROLE to', async () => {
    const climber = await role();
    await admin.query(`grant dms_app, dms_audit_retention to ${climber}`);
    await assert.rejects(start(loginAs(climber, '-c role=dms_app')), /is a member of dms_app, dms_audit_retention, which SET ROLE could switch to/);
  });

  it('refuses a login that owns part of the schema', async () => {
    const owner = await role();
    const table = `dms_t_owned_${randomBytes(4).toString('hex')}`;
    await admin.query(`create table ${table} (id int)`);
    await admin.query(`alter table ${table} owner to ${owner}`);
    try {
      await assert.rejects(connectPostgres({ url: loginAs(owner), appRole: owner, poolSize: 1 }), /owns the schema or the database/);
    } finally {
      await admin.query(`drop table ${table}`);
    }
  });

  it('refuses a login that is not the app role, and one that cannot log in at all', async () => {
    await assert.rejects(start(loginAs(await role())), /acts as "dms_t_\w+", not as "dms_app"/);
    await assert.rejects(start(loginAs('dms_no_such_role')), /cannot log in as dms_app \(DATABASE_APP_URL\)/);
  });

  it('checks the sealer’s and retention’s logins the same way', async () => {
    await assert.rejects(
      openDatabase({ url: process.env.TEST_DATABASE_URL!, logins: { sealer: loginAs('postgres', '-c role=dms_audit_sealer') }, pgliteDir: 'memory://', poolSize: 1 }),
      /database login "postgres" \(DATABASE_SEALER_URL\) is a superuser/,
    );
    const climber = await role();
    await admin.query(`grant dms_audit_sealer to ${climber}`);
    await assert.rejects(
      openDatabase({ url: process.env.TEST_DATABASE_URL!, logins: { retention: loginAs(climber) }, pgliteDir: 'memory://', poolSize: 1 }),
      /\(DATABASE_RETENTION_URL\) is a member of dms_audit_sealer/,
    );
  });
});

describe('a request’s transaction on PostgreSQL', onPostgres, () => {
  let db: Database;
  before(async () => {
    db = await openTestDatabase('postgres');
  });
  after(() => db.close());

  it('logs in as dms_app itself, so RESET ROLE and SET ROLE lead nowhere', async () => {
    const who = () => withTenant(db, SYSTEM_SCOPE, async (tx) => {
      await tx.query('reset role');
      const { rows } = await tx.query<{ current_user: string; session_user: string }>('select current_user, session_user');
      return rows[0];
    });
    assert.deepEqual(await who(), { current_user: 'dms_app', session_user: 'dms_app' });
    for (const attempt of ['set local role dms_audit_retention', 'set local role dms_audit_sealer', 'set local role postgres', 'set role postgres', 'set session authorization postgres']) {
      await assert.rejects(withTenant(db, SYSTEM_SCOPE, (tx) => tx.query(attempt)), /permission denied/, attempt);
    }
    await assert.rejects(withTenant(db, SYSTEM_SCOPE, (tx) => tx.query(`select set_config('role', 'dms_audit_retention', true)`)), /permission denied/);
    assert.equal((await db.transaction((tx) => tx.query<{ r: string }>('select current_user as r'))).rows[0]!.r, 'dms_app');
  });

  it('gives the sealer and retention their own logins, neither able to become the other', async () => {
    for (const [role, other] of [['dms_audit_sealer', 'dms_audit_retention'], ['dms_audit_retention', 'dms_audit_sealer']] as const) {
      const { rows } = await db.privilegedTransaction(role, async (tx) => {
        await tx.query('reset role');
        return tx.query<{ s: string; c: string }>('select session_user as s, current_user as c');
      });
      assert.deepEqual(rows[0], { s: role, c: role });
      await assert.rejects(db.privilegedTransaction(role, (tx) => tx.query(`set local role ${other}`)), /permission denied/);
      await assert.rejects(db.privilegedTransaction(role, (tx) => tx.query('set local role dms_app')), /permission denied/);
    }
  });
});

for (const backend of backends()) {
  describe(`dms_app's privileges on ${backend}`, () => {
    let db: Database;
    before(async () => {
      db = await openTestDatabase(backend);
    });
    after(() => db.close());
    const asApp = (sql: string) => withTenant(db, SYSTEM_SCOPE, (tx) => tx.query(sql));
    const nil = '00000000-0000-0000-0000-000000000000';

    it('only reads the audit chains, anchors and checkpoints', async () => {
      for (const table of ['audit_chains', 'audit_chain_anchors', 'audit_checkpoints', 'audit_retention_policies']) {
        await asApp(`select * from ${table} limit 1`);
      }
      const refused = [
        `insert into audit_chains (chain_id, org_id, last_seq) values ('${nil}', null, 5)`,
        `update audit_chains set last_seq = last_seq + 1`,
        `delete from audit_chains`,
        `insert into audit_chain_anchors (chain_id, org_id, anchor_seq, anchor_checksum) values ('${nil}', null, 3, 'x')`,
        `update audit_chain_anchors set anchor_seq = anchor_seq + 1`,
        `delete from audit_chain_anchors`,
        `insert into audit_checkpoints (org_id, seq, checksum, timestamp, key_id, signature) values (null, 1, 'x', now(), 'k', 's')`,
        `update audit_checkpoints set signature = 'forged'`,
        `delete from audit_checkpoints`,
        `update audit_retention_policies set last_cleanup_at = now()`,
        `insert into audit_retention_policies (org_id, last_cleanup_at) values (null, now())`,
        `delete from audit_retention_policies`,
        `insert into audit_logs (id, org_id, seq, timestamp, actor_type, action, result, checksum) values (gen_random_uuid(), null, 999, now(), 'system', 'x', 'success', 'x')`,
      ];
      for (const sql of refused) await assert.rejects(asApp(sql), /permission denied/, sql);
    });

    it('writes no seal and nothing of the pending queue, and rewrites no audit entry (0012)', async () => {
      for (const table of ['audit_entries', 'audit_seals', 'audit_pending', 'audit_logs']) await asApp(`select * from ${table} limit 1`);
      const refused = [
        `insert into audit_seals (org_id, seq, pending_order, prev_checksum, checksum) values (null, 1, -1, null, 'x')`,
        `update audit_seals set checksum = 'forged'`,
        `delete from audit_seals`,
        `truncate audit_seals`,
        `insert into audit_pending (org_id, pending_order) values (null, -1)`,
        `update audit_pending set pending_order = 0`,
        `delete from audit_pending`,
        `truncate audit_pending`,
        `update audit_entries set action = 'forged'`,
        `delete from audit_entries`,
        `truncate audit_entries`,
        `update audit_logs set action = 'forged'`,
        `delete from audit_logs`,
        `insert into audit_logs (id, org_id, timestamp, actor_type, action, result, prev_checksum) values (gen_random_uuid(), null, now(), 'system', 'x', 'success', 'x')`,
      ];
      for (const sql of refused) await assert.rejects(asApp(sql), /permission denied/, sql);
    });

    it('lets the sealer only append seals, and retention only delete entries and seals (0012)', async () => {
      const run = (privilege: typeof SEALER | typeof RETENTION, sql: string) => withAuditPrivilege(db, privilege, (tx) => tx.query(sql));
      const sealerRefused = [
        `update audit_seals set checksum = 'forged' where false`,
        `delete from audit_seals where false`,
        `insert into audit_pending (org_id, pending_order) values (null, -1)`,
        `delete from audit_pending where false`,
        `update audit_entries set action = 'forged' where false`,
        `delete from audit_entries where false`,
        `insert into audit_entries (id, org_id, timestamp, actor_type, action, result) values (gen_random_uuid(), null, now(), 'system', 'x', 'success')`,
      ];
      for (const sql of sealerRefused) await assert.rejects(run(SEALER, sql), /permission denied/, sql);
      const retentionRefused = [
        `insert into audit_seals (org_id, seq, pending_order, prev_checksum, checksum) values (null, 1, -1, null, 'x')`,
        `update audit_seals set checksum = 'forged' where false`,
        `insert into audit_pending (org_id, pending_order) values (null, -1)`,
        `delete from audit_pending where false`,
        `update audit_entries set action = 'forged' where false`,
        `insert into audit_entries (id, org_id, timestamp, actor_type, action, result) values (gen_random_uuid(), null, now(), 'system', 'x', 'success')`,
      ];
      for (const sql of retentionRefused) await assert.rejects(run(RETENTION, sql), /permission denied/, sql);
    });

    it('forces row-level security on the seals and the pending queue (0012)', async () => {
      const { rows } = await asApp(`select relname, relrowsecurity, relforcerowsecurity from pg_class
                                     where relname in ('audit_entries', 'audit_seals', 'audit_pending') order by relname`);
      assert.deepEqual(rows.map((r) => [r.relname, r.relrowsecurity, r.relforcerowsecurity]),
        [['audit_entries', true, true], ['audit_pending', true, true], ['audit_seals', true, true]]);
      // A tenant scope sees its own organizations' seals and queue only: none of another's.
      const other = { scope: 'organization', partnerId: nil, orgIds: [randomUUID()] } as const;
      const seen = await withTenant(db, other, (tx) => tx.query(`select (select count(*)::int from audit_seals) + (select count(*)::int from audit_pending) as n`));
      assert.equal(seen.rows[0]!.n, 0);
    });
  });
}
