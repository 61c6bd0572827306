// The audit chain's rules that live in the database (0009, 0012), tried the way an attacker would:
// a row inserted already sealed (which jammed its chain's sealer for good), a seal for an entry
// that is not pending in its chain, a fork, an interior row deleted and the anchor moved past it
// (which /verify then called valid), by dms_app, the sealer's and the retention login, and by the
// owner with triggers off, which only /verify can catch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { asOwner, backends, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, login, type Session } from '../../test/support/clients.js';
import type { Queryable } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { RETENTION, SEALER, withAuditPrivilege } from './privilege.js';
import { createAuditRecorder } from './recorder.js';

interface Row { id: string; seq: number; checksum: string }

for (const backend of backends()) {
  describe(`the audit chain's database rules on ${backend}`, () => {
    let t: TestApp;
    let system: Session;
    before(async () => {
      t = await testApp({ backend });
      system = await login(t.app, await createUser(t.db, { scope: 'system' }));
    });
    after(() => t.close());

    /** An organization whose chain holds `count` sealed rows. */
    async function chainOf(count: number): Promise<{ org: TestOrg; rows: Row[] }> {
      const org = await createOrg(t.db, (await createPartner(t.db)).id);
      await record(org, count);
      await t.app.auditSealer.sealNow();
      const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query<Row>(`select id, seq, checksum from audit_logs where org_id = $1 order by seq`, [org.id]));
      assert.equal(rows.length, count);
      return { org, rows };
    }
    async function record(org: TestOrg, count: number): Promise<string[]> {
      const write = createAuditRecorder({ now: Date.now, onRecorded: () => {} });
      await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
        for (let i = 0; i < count; i++) await write(tx, { orgId: org.id, actor: { type: 'system', id: null }, action: 'site.update', details: { i } });
      });
      const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query<{ id: string }>(`select id from audit_logs where org_id = $1 and seq is null order by pending_order`, [org.id]));
      return rows.map((r) => r.id);
    }
    const verify = async (org: TestOrg) => (await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/verify?orgId=${org.id}` })).json();
    const retention = (fn: (tx: Queryable) => Promise<unknown>) => withAuditPrivilege(t.db, RETENTION, fn);
    const moveAnchor = (tx: Queryable, org: TestOrg, row: Pick<Row, 'seq' | 'checksum'>) => tx.query(
      `insert into audit_chain_anchors as a (chain_id, org_id, anchor_seq, anchor_checksum) values ($1, $1, 0, '')
       on conflict (chain_id) do nothing`, [org.id],
    ).then(() => tx.query(`update audit_chain_anchors set anchor_seq = $2, anchor_checksum = $3 where chain_id = $1`, [org.id, row.seq, row.checksum]));
    /** Retention's deletion of seqs lo..hi: the entries, then their seals. */
    const deleteEntries = (tx: Queryable, org: TestOrg, lo: number, hi: number) => tx.query(
      `delete from audit_entries a using audit_seals s where a.chain_id = s.chain_id and a.pending_order = s.pending_order and s.chain_id = $1 and s.seq between $2 and $3`, [org.id, lo, hi]);
    const deleteSeals = (tx: Queryable, org: TestOrg, lo: number, hi: number) =>
      tx.query(`delete from audit_seals where chain_id = $1 and seq between $2 and $3`, [org.id, lo, hi]);
    const deleteRows = (tx: Queryable, org: TestOrg, lo: number, hi: number) => deleteEntries(tx, org, lo, hi).then(() => deleteSeals(tx, org, lo, hi));
    const insertSealed = (tx: Queryable, org: TestOrg, seq: number) => tx.query(
      `insert into audit_logs (id, org_id, seq, prev_checksum, checksum, timestamp, actor_type, action, result)
       values (gen_random_uuid(), $1, $2, null, repeat('0', 64), now(), 'system', 'site.update', 'success')`, [org.id, seq],
    );
    /** A seal written by hand, as the sealer's login could write it, for the entry `id` (its pending_order looked up). */
    const insertSeal = (tx: Queryable, org: TestOrg, seal: { id: string; seq: number; prev: string | null }) => tx.query(
      `insert into audit_seals (org_id, seq, pending_order, prev_checksum, checksum)
       values ($2, $3, coalesce((select pending_order from audit_entries where id = $1), -1), $4, repeat('0', 64))`,
      [seal.id, org.id, seal.seq, seal.prev],
    );
    const asSealer = (fn: (tx: Queryable) => Promise<unknown>) => withAuditPrivilege(t.db, SEALER, fn);
    /**
     * Runs fn while no sealer places the chain's pending rows: the chain's head held on a connection
     * of its own (PostgreSQL, where other test files' sealers run too), or this app's sealer stopped
     * (PGlite, one connection).
     */
    async function holdingChain(org: TestOrg, fn: () => Promise<void>): Promise<void> {
      if (!t.db.connection) {
        await t.app.auditSealer.stop();
        try {
          return await fn();
        } finally {
          t.app.auditSealer.start();
        }
      }
      const holder = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query(`select 1 from audit_chains where chain_id = $1 for update`, [org.id]);
        return await fn();
      } finally {
        await holder.query('rollback').catch(() => {});
        await holder.end();
      }
    }

    it('refuses a row inserted already sealed, so the chain’s sealer keeps working', async () => {
      const { org } = await chainOf(2);
      await assert.rejects(withTenant(t.db, SYSTEM_SCOPE, (tx) => insertSealed(tx, org, 3)), /permission denied/);
      // Even the owner, with triggers on, cannot: the row would claim seq 3 ahead of the sealer.
      await assert.rejects(asOwner(t.db, (tx) => insertSealed(tx, org, 3)), /inserted pending/);
      const [pending] = await record(org, 1);
      await assert.rejects(asOwner(t.db, (tx) => insertSeal(tx, org, { id: pending!, seq: 3, prev: null })), /sealed by the sealer only/);
      await t.app.auditSealer.sealNow();
      const v = await verify(org);
      assert.deepEqual([v.valid, v.checked, v.pending], [true, 3, 0]);
    });

    it('takes a seal only from the sealer, for an entry pending in its own chain, once', async () => {
      const { org, rows } = await chainOf(2);
      const other = await chainOf(1);
      await holdingChain(org, async () => {
        const [pending] = await record(org, 1);
        const next = { id: pending!, seq: 3, prev: rows[1]!.checksum };
        // dms_app writes neither seals nor the queue.
        for (const sql of [`insert into audit_seals (org_id, seq, pending_order, prev_checksum, checksum) values ('${org.id}', 3, 1, '${next.prev}', 'x')`,
          `insert into audit_pending (org_id, pending_order) values ('${org.id}', -1)`, `delete from audit_pending`]) {
          await assert.rejects(withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(sql)), /permission denied/, sql);
        }
        // The sealer's login without its session setting.
        await assert.rejects(t.db.privilegedTransaction(SEALER.role, async (tx) => {
          await tx.query(`select set_config('role', $1, true), set_config('app.scope', 'system', true)`, [SEALER.role]);
          await insertSeal(tx, org, next);
        }), /sealed by the sealer only/);
        // An entry of another chain, an entry already sealed, no entry at all.
        await assert.rejects(asSealer((tx) => insertSeal(tx, other.org, { id: pending!, seq: 2, prev: other.rows[0]!.checksum })), /not pending in this chain/);
        await assert.rejects(asSealer((tx) => insertSeal(tx, other.org, { id: other.rows[0]!.id, seq: 2, prev: other.rows[0]!.checksum })), /audit_seals_entry/);
        await assert.rejects(asSealer((tx) => insertSeal(tx, org, { id: org.id, seq: 3, prev: next.prev })), /not pending in this chain/);
        // Forks: a seq taken, a predecessor claimed twice, a link to no row at all, a later row without one.
        await assert.rejects(asSealer((tx) => insertSeal(tx, org, { ...next, seq: 2 })), /audit_seals_chain_seq/);
        await assert.rejects(asSealer((tx) => insertSeal(tx, org, { ...next, prev: rows[0]!.checksum })), /does not name the checksum of the row before it/);
        await assert.rejects(asSealer((tx) => insertSeal(tx, org, { ...next, prev: 'f'.repeat(64) })), /does not name the checksum of the row before it/);
        await assert.rejects(asSealer((tx) => insertSeal(tx, org, { ...next, seq: 4 })), /does not name the checksum of the row before it/);
        await assert.rejects(asSealer((tx) => insertSeal(tx, org, { ...next, prev: null })), /audit_seals_first_link/);
        // Nothing a refused seal did stays.
        assert.equal((await verify(org)).pending, 1);
      });
      await t.app.auditSealer.sealNow();
      const v = await verify(org);
      assert.deepEqual([v.valid, v.checked, v.pending], [true, 3, 0]);
    });

    it('lets dms_app neither delete a row nor move the anchor', async () => {
      const { org, rows } = await chainOf(4);
      for (const sql of ['delete from audit_logs where id = $1', 'delete from audit_entries where id = $1', 'delete from audit_seals where chain_id = $1']) {
        await assert.rejects(withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(sql, [sql.includes('chain_id') ? org.id : rows[1]!.id])), /permission denied/, sql);
      }
      await assert.rejects(withTenant(t.db, SYSTEM_SCOPE, (tx) => moveAnchor(tx, org, rows[2]!)), /permission denied/);
      assert.equal((await verify(org)).checked, 4);
    });

    it('lets retention delete only the prefix its anchor covers, and move the anchor only forward onto a real row', async () => {
      const { org, rows } = await chainOf(6);
      // The attack: an interior row deleted and the anchor moved past it.
      await assert.rejects(retention(async (tx) => {
        await moveAnchor(tx, org, rows[3]!);
        await deleteRows(tx, org, 3, 3);
      }), /only a prefix/);
      // A row above the anchor, its entry or its seal.
      await assert.rejects(retention((tx) => deleteEntries(tx, org, 1, 1)), /above the chain's anchor/);
      await assert.rejects(retention((tx) => deleteSeals(tx, org, 1, 1)), /above the chain's anchor/);
      // A seal whose entry would stay behind, reading as pending.
      await assert.rejects(retention(async (tx) => {
        await moveAnchor(tx, org, rows[1]!);
        await deleteSeals(tx, org, 1, 2);
      }), /outlive its seal/);
      // The anchor moved past rows that are left standing (checked at commit).
      await assert.rejects(retention((tx) => moveAnchor(tx, org, rows[3]!)), /survives at or below its chain's anchor/);
      // An anchor naming a row that is not there.
      await assert.rejects(retention((tx) => moveAnchor(tx, org, { seq: 2, checksum: rows[3]!.checksum })), /names a sealed row of its chain/);
      assert.equal((await verify(org)).checked, 6, 'nothing was deleted');

      // The honest path: anchor first, then the prefix under it, entries before seals.
      await retention(async (tx) => {
        await moveAnchor(tx, org, rows[1]!);
        await deleteRows(tx, org, 1, 2);
      });
      await assert.rejects(retention((tx) => moveAnchor(tx, org, rows[0]!)), /only moves forward/);
      const v = await verify(org);
      assert.deepEqual([v.valid, v.anchor.seq, v.checked, v.firstSeq], [true, 2, 4, 3]);
    });

    it('lets retention delete no pending entry', async () => {
      const { org, rows } = await chainOf(1);
      await holdingChain(org, async () => {
        const [pending] = await record(org, 1);
        await assert.rejects(retention(async (tx) => {
          await moveAnchor(tx, org, rows[0]!);
          await deleteEntries(tx, org, 1, 1);
          await tx.query(`delete from audit_entries where id = $1`, [pending]);
        }), /is pending/);
      });
      await t.app.auditSealer.sealNow();
      assert.deepEqual([(await verify(org)).valid, (await verify(org)).checked], [true, 2]);
    });

    it('reports rows still stored at or below the anchor as a break', async () => {
      const { org, rows } = await chainOf(5);
      // The owner with triggers off: row 3 deleted, the anchor moved past it to row 4.
      await asOwner(t.db, async (tx) => {
        await tx.query(`delete from audit_entries where id = $1`, [rows[2]!.id]);
        await tx.query(`delete from audit_seals where chain_id = $1 and seq = 3`, [org.id]);
        await tx.query(`insert into audit_chain_anchors (chain_id, org_id, anchor_seq, anchor_checksum) values ($1, $1, $2, $3)`, [org.id, rows[3]!.seq, rows[3]!.checksum]);
      }, { replica: true });
      const v = await verify(org);
      assert.equal(v.valid, false);
      assert.deepEqual(v.brokenAt, { seq: 1, id: rows[0]!.id, reason: 'below_anchor' });
      assert.equal(v.checked, 0);
    });

    // Two transactions at once need two connections: PGlite has one.
    it('seals an entry that commits after later ones were sealed', { skip: backend === 'pglite' }, async () => {
      const org = await createOrg(t.db, (await createPartner(t.db)).id);
      const write = createAuditRecorder({ now: Date.now, onRecorded: () => {} });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const insertedFirst = new Promise<void>((resolve) => (inserted = resolve));
      // Inserted first (the lowest pending_order of the chain), committed last.
      const late = withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
        await write(tx, { orgId: org.id, actor: { type: 'system', id: null }, action: 'site.update', details: { late: true } });
        await tx.query('select 1'); // the entry is queued (queryLater): it goes out with the next statement
        inserted();
        await held;
      });
      await insertedFirst;
      await record(org, 3);
      await t.app.auditSealer.sealNow();
      assert.deepEqual([(await verify(org)).checked, (await verify(org)).pending], [3, 0]);
      release();
      await late;
      await t.app.auditSealer.sealNow();
      const v = await verify(org);
      assert.deepEqual([v.valid, v.checked, v.pending], [true, 4, 0]);
      const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query<{ seq: number; details: { late?: boolean } }>(`select seq, details from audit_logs where org_id = $1 order by pending_order`, [org.id]));
      assert.deepEqual(rows.map((r) => [r.seq, r.details.late ?? false]), [[4, true], [1, false], [2, false], [3, false]]);
    });
  });
}
