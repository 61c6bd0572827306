// Signed checkpoints through HTTP: written every N sealed rows and on demand (the timer's pass),
// verifiable offline with the published key, scoped like /logs, never written twice; the key from
// AUDIT_SIGNING_KEY or generated once per DATA_DIR.
import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import canonicalize from 'canonicalize';
import { backends, privateTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createOrg, createPartner, createUser, type TestOrg } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { GENERATED_KEY_FILE, loadAuditSigner } from './checkpoints.js';
import { RETENTION, withAuditPrivilege } from './privilege.js';
import { createAuditRecorder } from './recorder.js';

interface Checkpoint { orgId: string | null; seq: number; checksum: string; timestamp: string; keyId: string; signature: string }

/** Appends `count` rows to an organization's chain in one transaction, then seals them. */
async function appendRows(t: TestApp, orgId: string | null, count: number): Promise<void> {
  const record = createAuditRecorder({ now: t.clock.now, onRecorded: () => {} });
  await withTenant(t.db, SYSTEM_SCOPE, async (tx) => {
    for (let i = 0; i < count; i++) await record(tx, { orgId, actor: { type: 'system', id: null }, action: 'site.update', details: { i } });
  });
  await t.app.auditSealer.sealNow();
}

/** What an outside auditor does: recompute the signed statement and check it against the public key. */
function signatureHolds(cp: Checkpoint, publicKeyPem: string): boolean {
  const statement = canonicalize({ orgId: cp.orgId, seq: cp.seq, checksum: cp.checksum, timestamp: cp.timestamp })!;
  return verify(null, Buffer.from(statement, 'utf8'), publicKeyPem, Buffer.from(cp.signature, 'base64'));
}

function keyIdOf(publicKeyPem: string): string {
  return createHash('sha256').update(createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

for (const backend of backends()) {
  describe(`audit checkpoints on ${backend}`, () => {
    let database: Awaited<ReturnType<typeof privateTestDatabase>>;
    let t: TestApp;
    let orgA: TestOrg;
    let orgB: TestOrg;
    let sessionA: Session;
    let system: Session;
    const call = (session: Session, url: string) => as(t.app, session)({ method: 'GET', url });
    const checkpoints = async (session: Session, query = ''): Promise<Checkpoint[]> => {
      const res = await call(session, `/api/v1/audit-logs/checkpoints?limit=100&${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data;
    };
    const headOf = async (session: Session, orgId: string) =>
      (await call(session, `/api/v1/audit-logs/verify?orgId=${orgId}`)).json() as { valid: boolean; lastSeq: number };

    before(async () => {
      database = await privateTestDatabase(backend);
      t = await testApp({ db: database.db, env: { AUDIT_CHECKPOINT_EVERY_ROWS: '5' } });
      const partner = await createPartner(t.db);
      orgA = await createOrg(t.db, partner.id);
      orgB = await createOrg(t.db, partner.id);
      sessionA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id }));
      system = await login(t.app, await createUser(t.db, { scope: 'system' }));
      await t.app.auditSealer.sealNow();
    });
    after(async () => {
      await t.close();
      await database.drop();
    });

    it('writes one checkpoint per sealed batch that crosses a multiple of N rows, at the new head', async () => {
      assert.equal((await headOf(sessionA, orgA.id)).lastSeq, 1, 'the admin’s login');
      await appendRows(t, orgA.id, 2); // head 3
      assert.deepEqual(await checkpoints(sessionA), []);
      await appendRows(t, orgA.id, 4); // head 7: crossed 5
      await appendRows(t, orgA.id, 2); // head 9
      await appendRows(t, orgA.id, 12); // head 21: crossed 10, 15 and 20 in one batch
      const list = await checkpoints(sessionA);
      assert.deepEqual(list.map((c) => c.seq), [21, 7], 'newest first');
      const entries = (await call(sessionA, `/api/v1/audit-logs/logs?limit=100`)).json().data as { seq: number; checksum: string }[];
      for (const cp of list) {
        assert.equal(cp.orgId, orgA.id);
        assert.equal(cp.checksum, entries.find((e) => e.seq === cp.seq)!.checksum, `checksum at seq ${cp.seq}`);
        assert.match(cp.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      }
    });

    it('signs checkpoints verifiably with the published key, and a changed statement fails', async () => {
      const res = await call(sessionA, '/api/v1/audit-logs/public-key');
      assert.equal(res.statusCode, 200, res.body);
      const key = res.json() as { keyId: string; algorithm: string; publicKey: string };
      assert.equal(key.algorithm, 'Ed25519');
      assert.match(key.publicKey, /^-----BEGIN PUBLIC KEY-----\n/);
      assert.equal(key.keyId, keyIdOf(key.publicKey));
      const list = await checkpoints(sessionA);
      assert.ok(list.length >= 2);
      for (const cp of list) {
        assert.equal(cp.keyId, key.keyId);
        assert.ok(signatureHolds(cp, key.publicKey), `signature at seq ${cp.seq}`);
        assert.equal(signatureHolds({ ...cp, seq: cp.seq + 1 }, key.publicKey), false);
        assert.equal(signatureHolds({ ...cp, checksum: cp.checksum.replace(/^./, (c) => (c === '0' ? '1' : '0')) }, key.publicKey), false);
      }
    });

    it('checkpoints moved chains on the timed pass, once per head, and not twice across instances', async () => {
      await appendRows(t, orgB.id, 3); // below the row threshold
      assert.deepEqual(await checkpoints(system, `orgId=${orgB.id}`), []);
      // A second instance on the same DATA_DIR (so the same generated key) runs its pass at the same time.
      const second = await testApp({ db: t.db, env: { DATA_DIR: t.config.dataDir, AUDIT_CHECKPOINT_EVERY_ROWS: '5' } });
      try {
        await Promise.all([t.app.auditCheckpoints.checkpointNow(), second.app.auditCheckpoints.checkpointNow()]);
      } finally {
        await second.close();
      }
      const list = await checkpoints(system, `orgId=${orgB.id}`);
      assert.deepEqual(list.map((c) => [c.orgId, c.seq]), [[orgB.id, 3]]);
      const publicKey = (await call(system, '/api/v1/audit-logs/public-key')).json().publicKey as string;
      assert.ok(signatureHolds(list[0]!, publicKey));
      // The platform chain (the system admin's login) was checkpointed too, with orgId null.
      const platform = await checkpoints(system, 'orgId=platform');
      assert.ok(platform.length >= 1);
      assert.ok(platform.every((c) => c.orgId === null && signatureHolds(c, publicKey)));

      // Nothing moved: the next pass writes nothing.
      await t.app.auditCheckpoints.checkpointNow();
      assert.equal((await checkpoints(system, `orgId=${orgB.id}`)).length, 1);
      await appendRows(t, orgB.id, 1);
      await t.app.auditCheckpoints.checkpointNow();
      assert.deepEqual((await checkpoints(system, `orgId=${orgB.id}`)).map((c) => c.seq), [4, 3]);
    });

    it('records retention anchors as checkpoints', async () => {
      const head = await headOf(system, orgB.id);
      const entries = (await call(system, `/api/v1/audit-logs/logs?orgId=${orgB.id}&limit=100`)).json().data as { seq: number; checksum: string }[];
      const anchored = entries.find((e) => e.seq === 2)!;
      await withAuditPrivilege(t.db, RETENTION, (tx) => t.app.auditCheckpoints.anchor(tx, { orgId: orgB.id, seq: 2, checksum: anchored.checksum }));
      const list = await checkpoints(system, `orgId=${orgB.id}`);
      assert.ok(list.some((c) => c.seq === 2 && c.checksum === anchored.checksum));
      const kinds = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query<{ seq: number; kind: string }>(
        `select seq, kind from audit_checkpoints where org_id = $1 order by seq`, [orgB.id]));
      assert.deepEqual(kinds.rows, [{ seq: 2, kind: 'anchor' }, { seq: 3, kind: 'periodic' }, { seq: head.lastSeq, kind: 'periodic' }]);
    });

    it('shows each caller only the chains it may read', async () => {
      const inA = await checkpoints(sessionA);
      assert.ok(inA.length > 0 && inA.every((c) => c.orgId === orgA.id));
      assert.deepEqual(await checkpoints(sessionA, `orgId=${orgB.id}`), []);
      assert.deepEqual(await checkpoints(sessionA, 'orgId=platform'), []);
      const res = await call(sessionA, `/api/v1/audit-logs/checkpoints?orgId=${orgB.id}`);
      assert.deepEqual(res.json().pagination, { page: 1, limit: 50, total: 0, totalPages: 0 });

      const partnerUser = await createUser(t.db, { scope: 'partner', partnerId: orgA.partnerId, orgAccess: 'selected', orgIds: [orgB.id] });
      const partner = await login(t.app, partnerUser);
      const seen = await checkpoints(partner);
      assert.ok(seen.length > 0 && seen.every((c) => c.orgId === orgB.id));
      assert.deepEqual(await checkpoints(partner, `orgId=${orgA.id}`), []);

      const all = await checkpoints(system);
      for (const org of [orgA.id, orgB.id, null]) assert.ok(all.some((c) => c.orgId === org), `system sees ${org}`);
      const paged = await call(system, '/api/v1/audit-logs/checkpoints?limit=1&page=2');
      assert.equal(paged.json().data.length, 1);
      assert.equal(paged.json().data[0].seq, all[1]!.seq);
      assert.equal(paged.json().pagination.total, all.length);
      assertProblem(await call(system, '/api/v1/audit-logs/checkpoints?orgId=nope'), 400, 'VALIDATION_FAILED');
    });

    it('admits an API key with audit:read and refuses one without', async () => {
      const reader = await createApiKey(t.db, orgA.id, { scopes: ['audit:read'] });
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/audit-logs/checkpoints', headers: { 'x-api-key': reader.key } });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.json().data.every((c: Checkpoint) => c.orgId === orgA.id));
      const key = await t.app.inject({ method: 'GET', url: '/api/v1/audit-logs/public-key', headers: { 'x-api-key': reader.key } });
      assert.equal(key.statusCode, 200, key.body);
      const devices = await createApiKey(t.db, orgA.id, { scopes: ['devices:read'] });
      for (const url of ['/api/v1/audit-logs/checkpoints', '/api/v1/audit-logs/public-key']) {
        assertProblem(await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': devices.key } }), 403, 'API_KEY_SCOPE_DENIED');
        assertProblem(await t.app.inject({ method: 'GET', url }), 401, 'UNAUTHENTICATED');
      }
    });

    it('generates the key once per DATA_DIR and reuses it on the next build', async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dms-key-'));
      const keyIds: string[] = [];
      for (let i = 0; i < 2; i++) {
        const built = await testApp({ db: t.db, env: { DATA_DIR: dataDir, JWT_SECRET: t.config.jwtSecret } });
        try {
          const res = await as(built.app, system)({ method: 'GET', url: '/api/v1/audit-logs/public-key' });
          assert.equal(res.statusCode, 200, res.body);
          keyIds.push(res.json().keyId);
        } finally {
          await built.close();
        }
      }
      assert.equal(keyIds[0], keyIds[1]);
      assert.notEqual(keyIds[0], (await call(system, '/api/v1/audit-logs/public-key')).json().keyId, 'another DATA_DIR, another key');
    });

    it('signs with AUDIT_SIGNING_KEY when it is set', async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const keyed = await testApp({ db: t.db, env: { AUDIT_SIGNING_KEY: pem, JWT_SECRET: t.config.jwtSecret } });
      try {
        const res = await keyed.app.inject({ method: 'GET', url: '/api/v1/audit-logs/public-key', headers: { authorization: `Bearer ${system.accessToken}` } });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), { keyId: keyIdOf(publicPem), algorithm: 'Ed25519', publicKey: publicPem });
        await appendRows(keyed, orgA.id, 1);
        await keyed.app.auditCheckpoints.checkpointNow();
        const [latest] = await checkpoints(sessionA);
        assert.equal(latest!.keyId, keyIdOf(publicPem));
        assert.ok(signatureHolds(latest!, publicPem));
      } finally {
        await keyed.close();
      }
    });
  });
}

describe('audit signing key', () => {
  it('is generated once per DATA_DIR, private, and shared by instances starting together', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dms-key-'));
    const signers = await Promise.all(Array.from({ length: 6 }, () => loadAuditSigner({ auditSigningKey: null, dataDir })));
    assert.equal(new Set(signers.map((s) => s.keyId)).size, 1);
    assert.equal(statSync(path.join(dataDir, GENERATED_KEY_FILE)).mode & 0o777, 0o600);
    const again = await loadAuditSigner({ auditSigningKey: null, dataDir });
    assert.equal(again.keyId, signers[0]!.keyId);
    const other = await loadAuditSigner({ auditSigningKey: null, dataDir: mkdtempSync(path.join(os.tmpdir(), 'dms-key-')) });
    assert.notEqual(other.keyId, again.keyId);
  });

  it('refuses to start with an AUDIT_SIGNING_KEY that is not an Ed25519 private key', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dms-key-'));
    await assert.rejects(loadAuditSigner({ auditSigningKey: 'not a key', dataDir }), /AUDIT_SIGNING_KEY/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await assert.rejects(loadAuditSigner({ auditSigningKey: rsa, dataDir }), /AUDIT_SIGNING_KEY must be an Ed25519/);
  });
});
