// The offline verifier on what the service really exports: chains written through the API and the
// recorder, exported newest first and resumed in seq order, with the service's own checkpoints and
// public key; and the same files tampered with after they left.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { privateTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, login, type Session, loginWithMfa } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { checksumOf } from '../audit/hash-chain.js';
import { createAuditRecorder } from '../audit/recorder.js';
import type { VerifyReport } from './verify-export.js';
import { verifyExport } from './verify-export.js';

type Entry = Record<string, unknown> & { seq: number | null; checksum: string | null; prevChecksum: string | null };


describe('offline verifier on the service’s exports', () => {
  let t: TestApp;
  let drop: () => Promise<void>;
  let org: TestOrg;
  let session: Session;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-export-'));
  const file = (name: string, text: string) => {
    const full = path.join(dir, name);
    writeFileSync(full, text);
    return full;
  };
  let keyFile: string;
  let checkpointsFile: string;
  let checkpoints: { seq: number; signature: string; orgId: string | null }[];

  before(async () => {
    const database = await privateTestDatabase();
    drop = database.drop;
    t = await testApp({ db: database.db, env: { AUDIT_CHECKPOINT_EVERY_ROWS: '4' } });
    org = await createOrg(t.db, (await createPartner(t.db)).id);
    const admin = await createUser(t.db, { scope: 'organization', orgId: org.id });
    session = await loginWithMfa(t.app, admin, t.clock);
    for (let i = 0; i < 4; i++) {
      const target = await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' });
      await as(t.app, session)({ method: 'PATCH', url: `/api/v1/users/${target.id}`, payload: { name: `Renamed ${i} “ü”`, role: i % 2 ? 'technician' : 'readonly' } });
    }
    const record = createAuditRecorder({ now: t.clock.now, onRecorded: () => {} });
    await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
      for (const details of [{ big: 1e21, small: 1e-7, neg: -0.5, text: 'tab\tnewline\n"quote"', emoji: '😀', nested: [{ b: 1, a: [null, true] }] }, {}]) {
        await record(tx, { orgId: org.id, actor: { type: 'agent', id: 'agent-7' }, action: 'script.execute', resource: { type: 'script', id: randomUUID(), name: 'a,b' }, details });
      }
    });
    await t.app.auditSealer.sealNow();
    await t.app.auditCheckpoints.checkpointNow();
    const get = (url: string) => as(t.app, session)({ method: 'GET', url: `/api/v1/audit-logs${url}` });
    keyFile = file('public-key.json', (await get('/public-key')).body);
    const cps = await get(`/checkpoints?orgId=${org.id}&limit=100`);
    assert.equal(cps.statusCode, 200, cps.body);
    checkpoints = cps.json().data;
    checkpointsFile = file('checkpoints.json', cps.body);
  });
  after(async () => {
    await t.close();
    await drop();
  });

  const exported = async (query: string) => {
    const res = await as(t.app, session)({ method: 'GET', url: `/api/v1/audit-logs/export?orgId=${org.id}&${query}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.body;
  };
  const verify = (text: string, withCheckpoints = true) =>
    verifyExport({ file: file(`export-${randomUUID()}`, text), ...(withCheckpoints ? { publicKeyFile: keyFile, checkpointsFile } : {}) });
  const entriesOf = (ndjson: string) => ndjson.trimEnd().split('\n').map((line) => JSON.parse(line) as Entry);
  const ndjsonOf = (entries: Entry[]) => entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
  const failure = (report: VerifyReport) => {
    const chain = report.chains.find((c) => c.orgId === org.id)!;
    return chain.brokenAt && { seq: chain.brokenAt.seq, reason: chain.brokenAt.reason };
  };

  it('verifies a newest-first ndjson export and a resumed json export, with the service’s checkpoints', async () => {
    assert.ok(checkpoints.length >= 2, `checkpoints: ${checkpoints.length}`);
    for (const text of [await exported('format=ndjson'), await exported('format=json&afterSeq=0')]) {
      const report = await verify(text);
      assert.equal(report.valid, true, JSON.stringify(report.chains));
      const chain = report.chains.find((c) => c.orgId === org.id)!;
      assert.equal(chain.firstSeq, 1);
      assert.equal(chain.rows, chain.lastSeq);
      assert.ok(chain.rows >= 9, `rows: ${chain.rows}`);
      assert.equal(chain.checkpoints.matched, checkpoints.length);
    }
    // A later pull resuming mid-chain starts after a seq whose row it does not hold.
    const resumed = await verify(await exported('format=ndjson&afterSeq=3'));
    assert.equal(resumed.valid, true);
    assert.deepEqual([resumed.chains[0]!.firstSeq, resumed.chains[0]!.startsMidChain], [4, true]);
  });

  it('verifies a system-scope export of every chain', async () => {
    const system = await login(t.app, await createUser(t.db, { scope: 'system' }));
    await t.app.auditSealer.sealNow();
    const res = await as(t.app, system)({ method: 'GET', url: '/api/v1/audit-logs/export?format=ndjson' });
    const report = await verify(res.body, false);
    assert.equal(report.valid, true, JSON.stringify(report.chains));
    assert.ok(report.chains.some((c) => c.orgId === null) && report.chains.some((c) => c.orgId === org.id));
  });

  it('fails a changed row at its seq and a deleted row with seq_gap', async () => {
    const entries = entriesOf(await exported('format=ndjson'));
    const changed = entries.map((e) => (e.seq === 3 ? { ...e, actorEmail: 'someone-else@example.test' } : e));
    assert.deepEqual(failure(await verify(ndjsonOf(changed))), { seq: 3, reason: 'checksum_mismatch' });
    const deleted = entries.filter((e) => e.seq !== 4);
    assert.deepEqual(failure(await verify(ndjsonOf(deleted))), { seq: 5, reason: 'seq_gap' });
  });

  it('fails a forged checkpoint signature, and a chain rewritten under a checkpoint', async () => {
    const text = await exported('format=ndjson&afterSeq=0');
    const [first, ...rest] = checkpoints;
    const forged = { ...first!, signature: Buffer.from(randomBytes(64)).toString('base64') };
    const report = await verifyExport({ file: file('forged-export', text), publicKeyFile: keyFile, checkpointsFile: file('forged.json', JSON.stringify({ data: [forged, ...rest] })) });
    assert.deepEqual(failure(report), { seq: forged.seq, reason: 'checkpoint_signature_invalid' });

    // Someone with the database changes seq 2 and recomputes every checksum after it: the chain
    // holds together, but the earliest signed checkpoint from seq 2 on no longer matches.
    const entries = entriesOf(text);
    let prev: string | null = null;
    const rewritten = entries.map((e) => {
      if (e.seq! < 2) return (prev = e.checksum), e;
      const row = { ...e, prevChecksum: prev, ...(e.seq === 2 ? { action: 'user.update.quiet' } : {}) };
      row.checksum = checksumOf(row as never);
      prev = row.checksum;
      return row;
    });
    assert.equal((await verify(ndjsonOf(rewritten), false)).valid, true);
    const firstSigned = Math.min(...checkpoints.filter((c) => c.seq >= 2).map((c) => c.seq));
    assert.deepEqual(failure(await verify(ndjsonOf(rewritten))), { seq: firstSigned, reason: 'checkpoint_mismatch' });
  });
});
