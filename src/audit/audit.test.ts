// The audit log through HTTP: chains a client can recompute, concurrency, tampering, the
// append-only guarantees, scope, filters and bad input.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import canonicalize from 'canonicalize';
import pg from 'pg';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createSite, createUser, type TestOrg, type TestUser } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session, loginWithMfa } from '../../test/support/clients.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { RETENTION, SEALER, withAuditPrivilege } from './privilege.js';
import { createAuditRecorder } from './recorder.js';
import { NIL_UUID } from '../db/columns.js';

type Entry = Record<string, unknown> & { seq: number; checksum: string; prevChecksum: string | null; id: string };

/** An outside verifier: recomputes each checksum from the /logs fields alone (API.md §8). */
function recompute(entry: Entry): string {
  const payload = {
    v: 1,
    orgId: entry.orgId, seq: entry.seq, timestamp: entry.timestamp, actorType: entry.actorType, actorId: entry.actorId,
    actorEmail: entry.actorEmail, action: entry.action, resourceType: entry.resourceType, resourceId: entry.resourceId,
    resourceName: entry.resourceName, details: entry.details, ipAddress: entry.ipAddress, userAgent: entry.userAgent,
    result: entry.result, errorMessage: entry.errorMessage, prevChecksum: entry.prevChecksum,
  };
  return createHash('sha256').update(canonicalize(payload)!, 'utf8').digest('hex');
}

async function allEntries(call: ReturnType<typeof as>, query: string): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let page = 1; ; page++) {
    const res = await call({ method: 'GET', url: `/api/v1/audit-logs/logs?limit=100&page=${page}&${query}` });
    assert.equal(res.statusCode, 200, res.body);
    out.push(...res.json().data);
    if (page >= res.json().pagination.totalPages) return out;
  }
}

for (const backend of backends()) {
  describe(`audit log on ${backend}`, () => {
    let t: TestApp;
    let org: TestOrg;
    let admin: TestUser;
    let session: Session;
    before(async () => {
      t = await testApp({ backend });
      const partner = await createPartner(t.db);
      org = await createOrg(t.db, partner.id);
      admin = await createUser(t.db, { scope: 'organization', orgId: org.id });
      session = await loginWithMfa(t.app, admin, t.clock);
    });
    after(() => t.close());

    it('records changes in the organization’s chain, which a client can recompute from /logs', async () => {
      const call = as(t.app, session);
      const created = await call({ method: 'POST', url: '/api/v1/users', payload: { email: `a-${randomBytes(3).toString('hex')}@x.test`, name: 'Zoë “Quotes” \\ Ünïcode', password: 'long-enough-pw', scope: 'organization', role: 'readonly' } });
      assert.equal(created.statusCode, 201, created.body);
      await call({ method: 'PATCH', url: `/api/v1/users/${created.json().id}`, payload: { name: 'Renamed', role: 'technician' } });
      await call({ method: 'DELETE', url: `/api/v1/users/${created.json().id}` });
      await t.app.auditSealer.sealNow();

      const entries = (await allEntries(call, '')).sort((a, b) => a.seq - b.seq);
      assert.ok(entries.length >= 5, `expected login, create, update, permission change, delete; got ${entries.length}`);
      assert.deepEqual(entries.map((e) => e.seq), entries.map((_, i) => i + 1));
      entries.forEach((entry, i) => {
        assert.equal(entry.orgId, org.id);
        assert.equal(entry.prevChecksum, i === 0 ? null : entries[i - 1]!.checksum);
        assert.equal(recompute(entry), entry.checksum, `checksum of seq ${entry.seq}`);
      });
      const actions = entries.map((e) => e.action);
      for (const action of ['user.login', 'user.create', 'user.update', 'user.permission.change', 'user.delete']) assert.ok(actions.includes(action), action);
      const update = entries.find((e) => e.action === 'user.update')!;
      assert.deepEqual((update.details as { changedFields: string[] }).changedFields.sort(), ['name', 'role']);
      assert.equal(update.actorEmail, admin.email);
      assert.equal(update.actorType, 'user');
      assert.equal(update.category, 'system');
      assert.equal(entries.find((e) => e.action === 'user.login')!.category, 'authentication');

      const verify = await call({ method: 'GET', url: '/api/v1/audit-logs/verify' });
      assert.equal(verify.statusCode, 200, verify.body);
      assert.deepEqual(verify.json(), { valid: true, checked: entries.length, firstSeq: 1, lastSeq: entries.length, anchor: null, pending: 0, brokenAt: null });
    });

    it('seals rows written in one transaction with the same timestamp in order', async () => {
      const target = await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' });
      t.clock.freeze();
      const res = await as(t.app, session)({ method: 'PATCH', url: `/api/v1/users/${target.id}`, payload: { role: 'technician' } });
      assert.equal(res.statusCode, 200);
      await t.app.auditSealer.sealNow();
      const rows = (await allEntries(as(t.app, session), `resource=${encodeURIComponent(target.email)}`)).sort((a, b) => a.seq - b.seq);
      assert.deepEqual(rows.map((r) => r.action), ['user.update', 'user.permission.change']);
      assert.equal(rows[0]!.timestamp, rows[1]!.timestamp);
      assert.equal(rows[1]!.seq, rows[0]!.seq + 1);
      assert.equal(rows[1]!.prevChecksum, rows[0]!.checksum);
      assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/audit-logs/verify' })).json().valid, true);
    });

    it('makes entries readable as soon as the response is sent, pending until sealed', async () => {
      const target = await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' });
      await t.app.auditSealer.stop(); // hold the sealer so the row stays pending
      try {
        await as(t.app, session)({ method: 'PATCH', url: `/api/v1/users/${target.id}`, payload: { name: 'Pending Pat' } });
        const [row] = await allEntries(as(t.app, session), `resource=${encodeURIComponent(target.email)}&action=user.update`);
        assert.ok(row, 'the entry is readable at once');
        if (row.seq === null) assert.equal(row.checksum, null);
      } finally {
        t.app.auditSealer.start();
      }
      await t.app.auditSealer.sealNow();
      assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/audit-logs/verify' })).json().pending, 0);
    });

    it('keeps one contiguous, fork-free chain under 64 concurrent writers and two sealers', async () => {
      const partner = await createPartner(t.db);
      const busy = await createOrg(t.db, partner.id);
      const busyAdmin = await createUser(t.db, { scope: 'organization', orgId: busy.id });
      const busySession = await loginWithMfa(t.app, busyAdmin, t.clock);
      const targets = await Promise.all(Array.from({ length: 8 }, () => createUser(t.db, { scope: 'organization', orgId: busy.id, role: 'readonly' })));
      const second = await testApp({ db: t.db, env: { JWT_SECRET: t.config.jwtSecret } }); // a second instance: another sealer racing the first
      try {
        const results = await Promise.all(
          Array.from({ length: 64 }, (_, i) =>
            as(i % 2 ? second.app : t.app, busySession)({ method: 'PATCH', url: `/api/v1/users/${targets[i % 8]!.id}`, payload: { name: `Writer ${i}` } }),
          ),
        );
        assert.deepEqual([...new Set(results.map((r) => r.statusCode))], [200]);
        await Promise.all([t.app.auditSealer.sealNow(), second.app.auditSealer.sealNow()]);
        await t.app.auditSealer.sealNow();
      } finally {
        await second.close();
      }
      const entries = await allEntries(as(t.app, busySession), '');
      const seqs = entries.map((e) => e.seq).sort((a, b) => a - b);
      assert.equal(entries.length, 67); // 64 updates, the admin's two sign-ins and its MFA enrolment
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
      assert.equal(new Set(entries.map((e) => e.prevChecksum)).size, 67);
      const verify = (await as(t.app, busySession)({ method: 'GET', url: '/api/v1/audit-logs/verify' })).json();
      assert.equal(verify.valid, true);
      assert.equal(verify.checked, 67);
    });

    it('refuses UPDATE, DELETE and TRUNCATE to the application role, and anything beyond sealing to the sealer', async () => {
      await t.app.auditSealer.sealNow();
      const [row] = await allEntries(as(t.app, session), 'action=user.login');
      const system = (sql: string) => withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(sql, sql.includes('$1') ? [row!.id] : []));
      // Seals and queue rows name their entry by its pending_order.
      const entry = 'pending_order = (select pending_order from audit_entries where id = $1)';
      const tables = [['audit_logs', 'id = $1'], ['audit_entries', 'id = $1'], ['audit_seals', entry], ['audit_pending', entry]] as const;
      for (const sql of tables.flatMap(([table, where]) => [`update ${table} set org_id = org_id where ${where}`, `delete from ${table} where ${where}`, `truncate ${table}`])) {
        await assert.rejects(system(sql), /append-only|permission denied|is not a table/, sql);
      }
      // The sealer appends seals and nothing more: it rewrites neither a seal nor an entry, nor empties the queue.
      for (const sql of [`update audit_seals set checksum = 'x' where ${entry}`, `update audit_entries set action = 'forged' where id = $1`,
        `update audit_logs set checksum = 'x' where id = $1`, `delete from audit_seals where ${entry}`, `delete from audit_pending`]) {
        await assert.rejects(withAuditPrivilege(t.db, SEALER, (tx) => tx.query(sql, sql.includes('$1') ? [row!.id] : [])), /append-only|permission denied/, sql);
      }
      // The retention login without its session setting is refused too.
      for (const sql of [`delete from audit_entries where id = $1`, `delete from audit_seals where ${entry}`]) {
        await assert.rejects(t.db.privilegedTransaction(RETENTION.role, async (tx) => {
          await tx.query(`select set_config('role', $1, true), set_config('app.scope', 'system', true)`, [RETENTION.role]);
          await tx.query(sql, [row!.id]);
        }), /append-only/, sql);
      }
      const again = await as(t.app, session)({ method: 'GET', url: `/api/v1/audit-logs/logs/${row!.id}` });
      assert.equal(again.json().action, 'user.login');
    });

    it('leaves no entry when the change fails, and no change when the entry cannot be written', async () => {
      const email = `dup-${randomBytes(3).toString('hex')}@x.test`;
      const call = as(t.app, session);
      const body = { email, name: 'Dup', password: 'long-enough-pw', scope: 'organization', role: 'readonly' };
      assert.equal((await call({ method: 'POST', url: '/api/v1/users', payload: body })).statusCode, 201);
      assertProblem(await call({ method: 'POST', url: '/api/v1/users', payload: body }), 409, 'CONFLICT');
      const creates = await allEntries(call, `action=user.create&resource=${encodeURIComponent(email)}`);
      assert.equal(creates.length, 1);

      // An entry the database refuses (a chain outside the scope) takes the change down with it.
      const foreign = await createOrg(t.db, (await createPartner(t.db)).id);
      const record = createAuditRecorder({ now: Date.now, onRecorded: () => {} });
      const scope = { scope: 'organization' as const, partnerId: org.partnerId, orgIds: [org.id] };
      await assert.rejects(
        withTenant(t.db, scope, async (tx) => {
          await tx.query(`insert into sites (org_id, name) values ($1, 'half-done')`, [org.id]);
          await record(tx, { orgId: foreign.id, actor: { type: 'system', id: null }, action: 'site.create' });
        }),
        /row-level security/,
      );
      const sites = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`select 1 from sites where name = 'half-done'`));
      assert.equal(sites.rowCount, 0);
    });

    it('keeps non-UUID actor and resource ids in details', async () => {
      const record = createAuditRecorder({ now: Date.now, onRecorded: () => {} });
      const scope = { scope: 'organization' as const, partnerId: org.partnerId, orgIds: [org.id] };
      await withTenant(t.db, scope, (tx) =>
        record(tx, { orgId: org.id, actor: { type: 'system', id: 'cron:nightly' }, action: 'script.execute', resource: { type: 'script', id: 'backup.ps1', name: 'Backup\u0000' }, details: { n: Infinity, when: new Date(0) } }),
      );
      await t.app.auditSealer.sealNow();
      const [entry] = await allEntries(as(t.app, session), 'action=script.execute');
      assert.equal(entry!.actorId, NIL_UUID);
      assert.equal(entry!.resourceId, NIL_UUID);
      assert.deepEqual(entry!.details, { n: null, when: '1970-01-01T00:00:00.000Z', rawActorId: 'cron:nightly', rawResourceId: 'backup.ps1' });
      assert.equal(entry!.category, 'automation');
      assert.equal(recompute(entry!), entry!.checksum);
    });
  });
}

describe('audit queries, scope and bad input', () => {
  let t: TestApp;
  let orgA: TestOrg;
  let orgB: TestOrg;
  const s: Record<string, Session> = {};
  const u: Record<string, TestUser> = {};
  before(async () => {
    t = await testApp();
    const partner = await createPartner(t.db);
    orgA = await createOrg(t.db, partner.id);
    orgB = await createOrg(t.db, partner.id);
    const other = await createPartner(t.db);
    await createOrg(t.db, other.id);
    u.a = await createUser(t.db, { scope: 'organization', orgId: orgA.id });
    u.b = await createUser(t.db, { scope: 'organization', orgId: orgB.id });
    u.partner = await createUser(t.db, { scope: 'partner', partnerId: partner.id });
    u.outsider = await createUser(t.db, { scope: 'partner', partnerId: other.id });
    u.system = await createUser(t.db, { scope: 'system' });
    for (const [k, user] of Object.entries(u)) s[k] = await loginWithMfa(t.app, user, t.clock);
    await as(t.app, s.a!)({ method: 'POST', url: '/api/v1/users', payload: { email: `searchable-${randomBytes(3).toString('hex')}@acme.test`, name: 'Percent 100% under_score', password: 'long-enough-pw', scope: 'organization', role: 'readonly' } });
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'nobody-here@nowhere.test', password: 'whatever-pw' } });
    await t.app.auditSealer.sealNow();
  });
  after(() => t.close());
  const get = (who: string, url: string) => as(t.app, s[who]!)({ method: 'GET', url: `/api/v1/audit-logs${url}` });

  it('shows each scope only its chains, and hides other tenants’ entries behind 404', async () => {
    const aEntries = (await get('a', '/logs?limit=100')).json().data as Entry[];
    assert.ok(aEntries.length > 0 && aEntries.every((e) => e.orgId === orgA.id));
    const partnerOrgs = new Set(((await get('partner', '/logs?limit=100')).json().data as Entry[]).map((e) => e.orgId));
    assert.ok([...partnerOrgs].every((id) => id === orgA.id || id === orgB.id));
    assert.equal((await get('outsider', `/logs?orgId=${orgA.id}`)).json().data.length, 0);
    assert.equal((await get('b', `/logs?orgId=${orgA.id}`)).json().pagination.total, 0);
    assertProblem(await get('b', `/logs/${aEntries[0]!.id}`), 404, 'NOT_FOUND');
    assertProblem(await get('outsider', `/logs/${aEntries[0]!.id}`), 404, 'NOT_FOUND');
    assertProblem(await get('b', `/verify?orgId=${orgA.id}`), 404, 'NOT_FOUND');
    assert.equal((await get('a', '/logs?orgId=platform')).json().data.length, 0);
  });

  it('puts events with no organization in the platform chain, readable by system scope', async () => {
    const failed = (await get('system', '/logs?orgId=platform&action=user.login.failed&user=nobody-here')).json().data as Entry[];
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.orgId, null);
    assert.equal(failed[0]!.result, 'failure');
    assert.equal(failed[0]!.actorEmail, 'nobody-here@nowhere.test');
    assert.deepEqual(failed[0]!.details, { email: 'nobody-here@nowhere.test', reason: 'invalid_credentials' });
    const verify = (await get('system', '/verify?orgId=platform')).json();
    assert.equal(verify.valid, true);
    // Every validation failure names where it lies (API.md §2), the rules no schema states included.
    assert.deepEqual(assertProblem(await get('system', '/verify'), 400, 'VALIDATION_FAILED').errors, [{ path: 'query.orgId', message: 'is required' }]);
  });

  it('filters by user (e-mail or name), action, resource and dates, literally and case-insensitively', async () => {
    const byEmail = (await get('a', `/logs?user=${encodeURIComponent(u.a!.email.toUpperCase())}`)).json().data as Entry[];
    assert.ok(byEmail.length >= 2 && byEmail.every((e) => e.actorEmail === u.a!.email));
    const byName = (await get('a', `/logs?user=${encodeURIComponent('user ' + u.a!.email.slice(0, 8))}`)).json().data as Entry[];
    assert.equal(byName.length, byEmail.length);
    assert.ok(((await get('a', '/logs?action=USER.CREATE')).json().data as Entry[]).every((e) => e.action === 'user.create'));
    assert.equal((await get('a', '/search?q=100%25')).json().data.length, 1);
    assert.equal((await get('a', '/search?q=under_score')).json().data.length, 1);
    assert.equal((await get('a', '/search?q=underXscore')).json().data.length, 0);
    assert.equal((await get('a', '/search?q=10_%25')).json().data.length, 0);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    assert.equal((await get('a', `/logs?from=${future}`)).json().data.length, 0);
    assert.ok((await get('a', `/logs?to=${future}`)).json().data.length > 0);
    const skip = (await get('a', '/logs?skipCount=true')).json().pagination;
    assert.equal(skip.total, null);
    assert.equal((await get('a', `/search?q=${encodeURIComponent("'; drop table audit_logs; --")}`)).statusCode, 200);
  });

  it('serves the entries shape of GET /audit-logs/', async () => {
    const res = await get('a', '/?action=user.create');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.ok(Array.isArray(body.entries) && body.entries.length === 1);
    const entry = body.entries[0];
    assert.deepEqual(Object.keys(entry).sort(), ['action', 'changes', 'details', 'id', 'ipAddress', 'resource', 'resourceType', 'sessionId', 'timestamp', 'user', 'userAgent']);
    assert.equal(typeof entry.details, 'string');
    assert.equal(entry.sessionId, null);
    assert.match(entry.resource, /^searchable-/);
    assert.equal(entry.changes.after.name, 'Percent 100% under_score');
    assert.deepEqual(entry.changes.before, {});
    assert.deepEqual(Object.keys(entry.user).sort(), ['department', 'email', 'name', 'role']);
    assert.deepEqual(Object.keys(body.pagination).sort(), ['limit', 'page', 'total', 'totalPages']);
  });

  it('answers bad parameters with 400, never a 500', async () => {
    for (const url of ['/logs?from=yesterday', '/logs?limit=abc', '/search', '/search?q=', '/logs?orgId=nope', '/logs/not-a-uuid', '/verify?fromSeq=0', '/logs?skipCount=maybe']) {
      assertProblem(await get('a', url), 400, 'VALIDATION_FAILED');
    }
    const now = Date.now();
    const reversed = assertProblem(await get('a', `/logs?from=${new Date(now).toISOString()}&to=${new Date(now - 1000).toISOString()}`), 400, 'VALIDATION_FAILED');
    assert.deepEqual(reversed.errors, [{ path: 'query.from', message: 'is later than to' }]);
    assert.equal((await get('a', '/logs?limit=1000&page=-1')).json().pagination.limit, 100);
  });
});

/** SQL for the id of the entry sealed at `seq` in the chain of the organization `$1`. */
const entryAt = (seq: number) => `(select a.id from audit_seals s join audit_entries a using (chain_id, pending_order) where s.chain_id = $1 and s.seq = ${seq})`;

/** An app, an organization with a signed-in admin, and a superuser connection to tamper with. */
async function privilegedSetup() {
  const t = await testApp();
  const privileged = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await privileged.connect();
  const org = await createOrg(t.db, (await createPartner(t.db)).id);
  const admin = await createUser(t.db, { scope: 'organization', orgId: org.id });
  const session = await login(t.app, admin);
  const verify = async (query = '') => (await as(t.app, session)({ method: 'GET', url: `/api/v1/audit-logs/verify${query}` })).json();
  return { t, privileged, org, session, verify, close: async () => { await privileged.end(); await t.close(); } };
}

describe('tampering behind the service’s back', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('is reported by /verify at the right seq', async () => {
    const { t, privileged, org, session, verify, close } = await privilegedSetup();
    try {
      // Site renames: audited changes an org admin makes without an MFA step, so the login is seq 1.
      const targets = await Promise.all([1, 2, 3].map(() => createSite(t.db, org.id)));
      for (const target of targets) await as(t.app, session)({ method: 'PATCH', url: `/api/v1/orgs/sites/${target.id}`, payload: { name: 'Changed' } });
      await t.app.auditSealer.sealNow();
      assert.equal((await verify()).valid, true);
      assert.equal((await verify()).checked, 4);

      // A superuser with triggers off is the attacker the chain exists for.
      await privileged.query(`set session_replication_role = replica`);
      await privileged.query(`update audit_entries set details = '{"changedFields":["email"]}' where id = ${entryAt(3)}`, [org.id]);
      const altered = await verify();
      assert.equal(altered.valid, false);
      assert.deepEqual({ seq: altered.brokenAt.seq, reason: altered.brokenAt.reason }, { seq: 3, reason: 'checksum_mismatch' });
      assert.equal(altered.checked, 2);
      const { rows: [third] } = await privileged.query(`select id from audit_logs where org_id = $1 and seq = 3`, [org.id]);
      assert.equal(altered.brokenAt.id, third.id);

      // An entry removed, its seal left: the row is gone from the chain all the same.
      await privileged.query(`delete from audit_entries where id = ${entryAt(3)}`, [org.id]);
      const deleted = await verify();
      assert.deepEqual({ seq: deleted.brokenAt.seq, reason: deleted.brokenAt.reason }, { seq: 4, reason: 'seq_gap' });

      // A seal removed, its entry left (now reading as pending): the chain ends early.
      await privileged.query(`delete from audit_seals where chain_id = $1 and seq >= 3`, [org.id]);
      const truncated = await verify();
      assert.deepEqual({ seq: truncated.brokenAt.seq, reason: truncated.brokenAt.reason }, { seq: 3, reason: 'missing_rows' });
      assert.equal((await verify('?toSeq=2')).valid, true);
    } finally {
      await close();
    }
  });
});

describe('a row moved to another organization', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('breaks the chain it left, although verification never reads org_id itself', async () => {
    const { t, privileged, org, session, verify, close } = await privilegedSetup();
    try {
      const other = await createOrg(t.db, org.partnerId);
      const targets = await Promise.all([1, 2].map(() => createSite(t.db, org.id)));
      for (const target of targets) await as(t.app, session)({ method: 'PATCH', url: `/api/v1/orgs/sites/${target.id}`, payload: { name: 'Changed' } });
      await t.app.auditSealer.sealNow();
      assert.equal((await verify()).valid, true);

      await privileged.query(`set session_replication_role = replica`);
      await privileged.query(`update audit_entries set org_id = $2 where id = ${entryAt(2)}`, [org.id, other.id]);
      const moved = await verify();
      assert.deepEqual({ valid: moved.valid, seq: moved.brokenAt.seq, reason: moved.brokenAt.reason }, { valid: false, seq: 3, reason: 'seq_gap' });
    } finally {
      await close();
    }
  });
});

describe('verifying a long chain in worker threads', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('checks every row across the ranges and reports a break in either one', async () => {
    const { t, privileged, org, verify, close } = await privilegedSetup();
    try {
      await privileged.query(
        `insert into audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_name, details, result)
         select gen_random_uuid(), $1, date_trunc('milliseconds', now()), 'system', null, null, 'device.update', 'device', 'host-' || g, jsonb_build_object('n', g), 'success'
           from generate_series(1, 25000) g`,
        [org.id],
      );
      await t.app.auditSealer.sealNow();
      const clean = await verify();
      assert.deepEqual({ valid: clean.valid, checked: clean.checked, firstSeq: clean.firstSeq, lastSeq: clean.lastSeq }, { valid: true, checked: 25001, firstSeq: 1, lastSeq: 25001 });

      await privileged.query(`set session_replication_role = replica`);
      await privileged.query(`update audit_entries set resource_name = 'forged' where id = ${entryAt(20000)}`, [org.id]);
      const late = await verify();
      assert.deepEqual({ valid: late.valid, seq: late.brokenAt.seq, reason: late.brokenAt.reason, checked: late.checked }, { valid: false, seq: 20000, reason: 'checksum_mismatch', checked: 19999 });
      const { rows: [forged] } = await privileged.query(`select id from audit_logs where org_id = $1 and seq = 20000`, [org.id]);
      assert.equal(late.brokenAt.id, forged.id);

      await privileged.query(`delete from audit_entries where id = ${entryAt(12501)}`, [org.id]);
      await privileged.query(`delete from audit_seals where chain_id = $1 and seq = 12501`, [org.id]);
      const boundary = await verify();
      assert.deepEqual({ seq: boundary.brokenAt.seq, reason: boundary.brokenAt.reason }, { seq: 12502, reason: 'seq_gap' });

      await privileged.query(`update audit_entries set details = '{"n": -1}' where id = ${entryAt(100)}`, [org.id]);
      const early = await verify();
      assert.deepEqual({ seq: early.brokenAt.seq, reason: early.brokenAt.reason, checked: early.checked }, { seq: 100, reason: 'checksum_mismatch', checked: 99 });
    } finally {
      await close();
    }
  });
});
