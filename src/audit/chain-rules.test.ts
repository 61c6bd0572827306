// The audit chain's rules that live in the database (0009), tried the way an attacker would: a row
// inserted already sealed (which jammed its chain's sealer for good), an interior row deleted and
// the anchor moved past it (which /verify then called valid), by dms_app and by the retention
// login, and by the owner with triggers off, which only /verify can catch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { asOwner, backends, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, login, type Session } from '../../test/support/clients.js';
import type { Queryable } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { RETENTION, withAuditPrivilege } from './privilege.js';
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
    async function record(org: TestOrg, count: number): Promise<void> {
      const write = createAuditRecorder({ now: Date.now, onRecorded: () => {} });
      await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
        for (let i = 0; i < count; i++) await write(tx, { orgId: org.id, actor: { type: 'system', id: null }, action: 'site.update', details: { i } });
      });
    }
    const verify = async (org: TestOrg) => (await as(t.app, system)({ method: 'GET', url: `/api/v1/audit-logs/verify?orgId=${org.id}` })).json();
    const retention = (fn: (tx: Queryable) => Promise<unknown>) => withAuditPrivilege(t.db, RETENTION, fn);
    const moveAnchor = (tx: Queryable, org: TestOrg, row: Pick<Row, 'seq' | 'checksum'>) => tx.query(
      `insert into audit_chain_anchors as a (chain_id, org_id, anchor_seq, anchor_checksum) values ($1, $1, 0, '')
       on conflict (chain_id) do nothing`, [org.id],
    ).then(() => tx.query(`update audit_chain_anchors set anchor_seq = $2, anchor_checksum = $3 where chain_id = $1`, [org.id, row.seq, row.checksum]));
    const insertSealed = (tx: Queryable, org: TestOrg, seq: number) => tx.query(
      `insert into audit_logs (id, org_id, seq, prev_checksum, checksum, timestamp, actor_type, action, result)
       values (gen_random_uuid(), $1, $2, null, repeat('0', 64), now(), 'system', 'site.update', 'success')`, [org.id, seq],
    );

    it('refuses a row inserted already sealed, so the chain’s sealer keeps working', async () => {
      const { org } = await chainOf(2);
      await assert.rejects(withTenant(t.db, SYSTEM_SCOPE, (tx) => insertSealed(tx, org, 3)), /permission denied/);
      // Even the owner, with triggers on, cannot: the row would claim seq 3 ahead of the sealer.
      await assert.rejects(asOwner(t.db, (tx) => insertSealed(tx, org, 3)), /inserted pending/);
      await record(org, 1);
      await t.app.auditSealer.sealNow();
      const v = await verify(org);
      assert.deepEqual([v.valid, v.checked, v.pending], [true, 3, 0]);
    });

    it('lets dms_app neither delete a row nor move the anchor', async () => {
      const { org, rows } = await chainOf(4);
      await assert.rejects(withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`delete from audit_logs where id = $1`, [rows[1]!.id])), /permission denied/);
      await assert.rejects(withTenant(t.db, SYSTEM_SCOPE, (tx) => moveAnchor(tx, org, rows[2]!)), /permission denied/);
      assert.equal((await verify(org)).checked, 4);
    });

    it('lets retention delete only the prefix its anchor covers, and move the anchor only forward onto a real row', async () => {
      const { org, rows } = await chainOf(6);
      // The attack: an interior row deleted and the anchor moved past it.
      await assert.rejects(retention(async (tx) => {
        await moveAnchor(tx, org, rows[3]!);
        await tx.query(`delete from audit_logs where org_id = $1 and seq = 3`, [org.id]);
      }), /only a prefix/);
      // A row above the anchor.
      await assert.rejects(retention((tx) => tx.query(`delete from audit_logs where org_id = $1 and seq = 1`, [org.id])), /above the chain's anchor/);
      // The anchor moved past rows that are left standing (checked at commit).
      await assert.rejects(retention((tx) => moveAnchor(tx, org, rows[3]!)), /survives at or below its chain's anchor/);
      // An anchor naming a row that is not there.
      await assert.rejects(retention((tx) => moveAnchor(tx, org, { seq: 2, checksum: rows[3]!.checksum })), /names a sealed row of its chain/);
      assert.equal((await verify(org)).checked, 6, 'nothing was deleted');

      // The honest path: anchor first, then the prefix under it.
      await retention(async (tx) => {
        await moveAnchor(tx, org, rows[1]!);
        await tx.query(`delete from audit_logs where org_id = $1 and seq <= 2`, [org.id]);
      });
      await assert.rejects(retention((tx) => moveAnchor(tx, org, rows[0]!)), /only moves forward/);
      const v = await verify(org);
      assert.deepEqual([v.valid, v.anchor.seq, v.checked, v.firstSeq], [true, 2, 4, 3]);
    });

    it('reports rows still stored at or below the anchor as a break', async () => {
      const { org, rows } = await chainOf(5);
      // The owner with triggers off: row 3 deleted, the anchor moved past it to row 4.
      await asOwner(t.db, async (tx) => {
        await tx.query(`delete from audit_logs where org_id = $1 and seq = 3`, [org.id]);
        await tx.query(`insert into audit_chain_anchors (chain_id, org_id, anchor_seq, anchor_checksum) values ($1, $1, $2, $3)`, [org.id, rows[3]!.seq, rows[3]!.checksum]);
      }, { replica: true });
      const v = await verify(org);
      assert.equal(v.valid, false);
      assert.deepEqual(v.brokenAt, { seq: 1, id: rows[0]!.id, reason: 'below_anchor' });
      assert.equal(v.checked, 0);
    });
  });
}
