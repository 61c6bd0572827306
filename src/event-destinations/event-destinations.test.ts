// /event-destinations through HTTP (API.md §9): who may create which destination, limits, secrets
// and audit; then delivery of the sealed chain to a real webhook receiver: signatures, order,
// filters, retries that hold later entries back, replay, rotation, test sends, the delivery log,
// and one sender per destination across instances. Each suite has a database of its own: the apps
// of other test files would otherwise take part in sending these destinations, as instances should.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, privateTestDatabase, testApp, type TestApp } from '../../test/support/app.js';
import { createOrg, createPartner, createUser, type TestOrg, type TestPartner } from '../../test/support/factory.js';
import { as, assertProblem, login, loginWithMfa, type Session } from '../../test/support/clients.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { checksumOf, type ChainFields } from '../audit/hash-chain.js';
import { RSYSLOG_MISSING, rsyslogdPath, startRsyslog, type Rsyslog } from '../../test/support/rsyslog.js';

const URL_PATH = '/api/v1/event-destinations';

/** Standard Webhooks, checked by hand (node:crypto), independently of the library that signs. */
function signatureValid(hook: ReceivedWebhook, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${hook.headers['webhook-id']}.${hook.headers['webhook-timestamp']}.${hook.body}`).digest('base64');
  return String(hook.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

for (const backend of backends()) {
  describe(`event destinations on ${backend}`, () => {
    let t: TestApp;
    let partner: TestPartner;
    let orgA: TestOrg;
    let orgB: TestOrg;
    let foreign: TestOrg;
    let receiver: WebhookReceiver;
    let database: Awaited<ReturnType<typeof privateTestDatabase>>;
    const s: Record<string, Session> = {};
    const call = (who: string) => as(t.app, s[who]!);
    const create = (who: string, payload: Record<string, unknown>) => call(who)({ method: 'POST', url: URL_PATH, payload });
    const newSite = async (orgId: string, name: string) => {
      const res = await call('orgAdminA')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId, name } });
      assert.equal(res.statusCode, 201, res.body);
    };
    /** Seals what is pending, then runs one delivery pass. */
    const deliver = async () => {
      await t.app.auditSealer.sealNow();
      await t.app.eventSender.runNow();
    };
    const auditOf = async (id: string) => withTenant(t.db, SYSTEM_SCOPE, async (tx) =>
      (await tx.query<{ action: string; org_id: string | null; details: Record<string, unknown> }>(
        `select action, org_id, details from audit_logs where resource_id = $1 order by pending_order`, [id])).rows);

    const encryptionKey = randomBytes(32).toString('hex');
    before(async () => {
      database = await privateTestDatabase(backend);
      t = await testApp({ backend, db: database.db, env: { OUTBOUND_ALLOW_PRIVATE: 'true', APP_ENCRYPTION_KEY: encryptionKey } });
      partner = await createPartner(t.db);
      orgA = await createOrg(t.db, partner.id);
      orgB = await createOrg(t.db, partner.id);
      foreign = await createOrg(t.db, (await createPartner(t.db)).id);
      const users = {
        system: await createUser(t.db, { scope: 'system' }),
        partner: await createUser(t.db, { scope: 'partner', partnerId: partner.id }),
        partnerSelected: await createUser(t.db, { scope: 'partner', partnerId: partner.id, orgAccess: 'selected', orgIds: [orgA.id] }),
        orgAdminA: await createUser(t.db, { scope: 'organization', orgId: orgA.id }),
        orgAdminB: await createUser(t.db, { scope: 'organization', orgId: orgB.id }),
      };
      for (const [k, user] of Object.entries(users)) s[k] = await loginWithMfa(t.app, user, t.clock);
      s.noMfaA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id }));
      s.readonlyA = await login(t.app, await createUser(t.db, { scope: 'organization', orgId: orgA.id, role: 'readonly' }));
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await receiver.close();
      await t.close();
      await database.drop();
    });

    it('creates a webhook with its secret shown once, kept sealed, and audited without it', async () => {
      const res = await create('orgAdminA', { name: 'SIEM', kind: 'webhook', url: receiver.url });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.match(body.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.deepEqual(
        { orgId: body.orgId, partnerId: body.partnerId, kind: body.kind, status: body.status, enabled: body.enabled, filter: body.filter, lastError: body.lastError },
        { orgId: orgA.id, partnerId: null, kind: 'webhook', status: 'active', enabled: true, filter: { actions: [], results: [] }, lastError: null },
      );
      const got = await call('orgAdminA')({ method: 'GET', url: `${URL_PATH}/${body.id}` });
      assert.equal(got.statusCode, 200);
      assert.equal('secret' in got.json(), false);
      const stored = await withTenant(t.db, SYSTEM_SCOPE, (tx) => tx.query(`select * from event_destinations where id = $1`, [body.id]));
      assert.equal(JSON.stringify(stored.rows).includes(body.secret.slice(6)), false, 'the secret is not stored in the clear');
      const audit = await auditOf(body.id);
      assert.deepEqual(audit.map((a) => [a.action, a.org_id]), [['event_destination.create', orgA.id]]);
      assert.equal(JSON.stringify(audit).includes(body.secret.slice(6)), false);
      await call('orgAdminA')({ method: 'DELETE', url: `${URL_PATH}/${body.id}` });
    });

    it('applies the reach rules of API keys, and MFA to changes', async () => {
      const hook = { name: 'x', kind: 'webhook', url: receiver.url };
      assertProblem(await create('orgAdminA', { ...hook, partnerId: partner.id }), 403, 'PERMISSION_DENIED');
      assertProblem(await create('orgAdminA', { ...hook, orgId: orgB.id }), 403, 'ORG_ACCESS_DENIED');
      assertProblem(await create('partner', hook), 400, 'VALIDATION_FAILED');
      assertProblem(await create('partner', { ...hook, partnerId: foreign.partnerId }), 403, 'PARTNER_MISMATCH');
      // Naming both owners is a 400, but a partnerId the caller may not name is refused as such first.
      assertProblem(await create('orgAdminA', { ...hook, orgId: orgA.id, partnerId: partner.id }), 403, 'PERMISSION_DENIED');
      assertProblem(await create('partner', { ...hook, orgId: orgA.id, partnerId: foreign.partnerId }), 403, 'PARTNER_MISMATCH');
      assertProblem(await create('partner', { ...hook, orgId: orgA.id, partnerId: partner.id }), 400, 'VALIDATION_FAILED');
      assertProblem(await create('partnerSelected', { ...hook, partnerId: partner.id }), 403, 'PERMISSION_DENIED');
      assertProblem(await create('partnerSelected', { ...hook, orgId: orgB.id }), 403, 'ORG_ACCESS_DENIED');
      assertProblem(await create('noMfaA', hook), 403, 'MFA_REQUIRED');
      assertProblem(await create('readonlyA', hook), 403, 'PERMISSION_DENIED');
      assertProblem(await create('system', { ...hook, orgId: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND');
      assertProblem(await create('orgAdminA', { ...hook, kind: 'webhook', caCertificate: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----' }), 400, 'VALIDATION_FAILED');
      assertProblem(await create('orgAdminA', { ...hook, url: 'ftp://example.com/x' }), 400, 'VALIDATION_FAILED');
      assertProblem(await create('orgAdminA', { ...hook, filter: { actions: ['Not An Action'] } }), 400, 'VALIDATION_FAILED');

      const own = (await create('orgAdminA', hook)).json();
      const wide = await create('partner', { ...hook, partnerId: partner.id });
      assert.equal(wide.statusCode, 201, wide.body);
      assert.deepEqual([wide.json().orgId, wide.json().partnerId], [null, partner.id]);
      const platform = await create('system', { ...hook, kind: 'syslog', url: 'syslog+tcp://127.0.0.1:6514' });
      assert.equal(platform.statusCode, 201, platform.body);
      assert.equal('secret' in platform.json(), false, 'syslog destinations have no secret');
      // Partner-wide and platform-wide changes are recorded in the platform chain.
      assert.deepEqual((await auditOf(wide.json().id)).map((a) => a.org_id), [null]);

      assertProblem(await call('orgAdminB')({ method: 'GET', url: `${URL_PATH}/${own.id}` }), 404, 'NOT_FOUND');
      assertProblem(await call('partnerSelected')({ method: 'GET', url: `${URL_PATH}/${wide.json().id}` }), 404, 'NOT_FOUND');
      assertProblem(await call('orgAdminA')({ method: 'GET', url: `${URL_PATH}/${platform.json().id}` }), 404, 'NOT_FOUND');
      const listA = (await call('orgAdminA')({ method: 'GET', url: URL_PATH })).json();
      assert.deepEqual(listA.data.map((d: { id: string }) => d.id), [own.id]);
      const listPartner = (await call('partner')({ method: 'GET', url: `${URL_PATH}?partnerId=${partner.id}` })).json();
      assert.deepEqual(listPartner.data.map((d: { id: string }) => d.id), [wide.json().id]);
      const listSystem = (await call('system')({ method: 'GET', url: `${URL_PATH}?skipCount=true` })).json();
      assert.ok([own.id, wide.json().id, platform.json().id].every((id) => listSystem.data.some((d: { id: string }) => d.id === id)));
      assert.equal(listSystem.pagination.total, null);

      assertProblem(await call('orgAdminA')({ method: 'PATCH', url: `${URL_PATH}/${own.id}`, payload: {} }), 400, 'EMPTY_UPDATE');
      // A field the destination has but a PATCH cannot change is named, not taken for an empty update.
      for (const payload of [{ kind: 'syslog' }, { orgId: own.orgId }, { partnerId: partner.id }]) {
        const fixed = await call('orgAdminA')({ method: 'PATCH', url: `${URL_PATH}/${own.id}`, payload });
        assertProblem(fixed, 400, 'VALIDATION_FAILED');
        assert.match(fixed.json().errors[0].path, new RegExp(`^body\\.${Object.keys(payload)[0]}$`));
      }
      assertProblem(await call('noMfaA')({ method: 'DELETE', url: `${URL_PATH}/${own.id}` }), 403, 'MFA_REQUIRED');
      for (const id of [own.id]) {
        const del = await call('orgAdminA')({ method: 'DELETE', url: `${URL_PATH}/${id}` });
        assert.deepEqual([del.statusCode, del.json()], [200, { success: true }]);
        assertProblem(await call('orgAdminA')({ method: 'GET', url: `${URL_PATH}/${id}` }), 404, 'NOT_FOUND');
      }
      await call('partner')({ method: 'DELETE', url: `${URL_PATH}/${wide.json().id}` });
      await call('system')({ method: 'DELETE', url: `${URL_PATH}/${platform.json().id}` });
      assert.deepEqual((await auditOf(own.id)).map((a) => a.action), ['event_destination.create', 'event_destination.delete']);
    });

    it('refuses the 21st destination of an organization, disabled ones counted', async () => {
      const made: string[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await create('orgAdminB', { name: `d${i}`, kind: 'webhook', url: receiver.url, enabled: i % 2 === 0 });
        assert.equal(res.statusCode, 201, res.body);
        made.push(res.json().id);
      }
      assertProblem(await create('orgAdminB', { name: 'one too many', kind: 'webhook', url: receiver.url }), 409, 'LIMIT_REACHED');
      for (const id of made) await call('orgAdminB')({ method: 'DELETE', url: `${URL_PATH}/${id}` });
    });

    it('delivers sealed entries in seq order, signed, filtered, each with its entry id', async () => {
      await t.app.auditSealer.sealNow();
      receiver.received.length = 0;
      // `*` alone is the empty prefix: every action, like an empty list.
      const all = (await create('orgAdminA', { name: 'all', kind: 'webhook', url: receiver.url, filter: { actions: ['*'] } })).json();
      const sitesOnly = (await create('orgAdminA', { name: 'sites', kind: 'webhook', url: `${receiver.url}?only=sites`, filter: { actions: ['site.*'], results: ['success'] } })).json();
      for (const name of ['one', 'two', 'three']) await newSite(orgA.id, `Site ${name}`);
      await deliver();
      const toAll = receiver.received.filter((r) => signatureValid(r, all.secret));
      const toSites = receiver.received.filter((r) => signatureValid(r, sitesOnly.secret));
      // Both destinations' creates (sealed after the first was made), then three site creates, in the chain's order.
      assert.deepEqual(toAll.map((r) => r.json.type), ['event_destination.create', 'event_destination.create', 'site.create', 'site.create', 'site.create']);
      const seqs = toAll.map((r) => r.json.data.seq as number);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
      for (const r of toAll) {
        assert.equal(r.headers['webhook-id'], r.json.data.id);
        assert.equal(r.json.timestamp, r.json.data.timestamp);
        assert.equal(typeof r.json.data.checksum, 'string');
        assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
      }
      assert.deepEqual(toSites.map((r) => r.json.type), ['site.create', 'site.create', 'site.create']);
      // Each destination keeps a connection of its own alive; none is shared between them.
      const ports = (hooks: ReceivedWebhook[]) => new Set(hooks.map((r) => r.remotePort));
      assert.equal(ports(toSites).size, 1, 'one connection for a destination’s batch');
      assert.ok([...ports(toSites)].every((p) => !ports(toAll).has(p)), 'never another destination’s connection');

      const log = (await call('orgAdminA')({ method: 'GET', url: `${URL_PATH}/${all.id}/deliveries` })).json();
      assert.equal(log.pagination.total, 5);
      assert.deepEqual(log.data.map((d: { outcome: string; attempt: number }) => [d.outcome, d.attempt]), Array(5).fill(['delivered', 1]));
      assert.deepEqual(log.data.map((d: { entryId: string }) => d.entryId).reverse(), toAll.map((r) => r.json.data.id));
      const standing = (await call('orgAdminA')({ method: 'GET', url: `${URL_PATH}/${all.id}` })).json();
      assert.equal(standing.status, 'active');
      assert.equal(typeof standing.lastSuccessAt, 'string');

      // Nothing is sent twice.
      const before = receiver.received.length;
      await deliver();
      assert.equal(receiver.received.length, before);
      for (const d of [all, sitesOnly]) await call('orgAdminA')({ method: 'DELETE', url: `${URL_PATH}/${d.id}` });
    });

    it('retries a failed entry with backoff, holding later entries of its chain back', async () => {
      const hook = (await create('orgAdminA', { name: 'flaky', kind: 'webhook', url: `${receiver.url}?flaky`, filter: { actions: ['site.create'] } })).json();
      const mine = () => receiver.received.filter((r) => signatureValid(r, hook.secret));
      receiver.received.length = 0;
      receiver.answer(500);
      await newSite(orgA.id, 'Retry one');
      await newSite(orgA.id, 'Retry two');
      await deliver();
      assert.deepEqual(mine().map((r) => r.json.data.resourceName), ['Retry one'], 'the second entry waits behind the first');
      const failed = (await call('orgAdminA')({ method: 'GET', url: `${URL_PATH}/${hook.id}` })).json();
      assert.equal(failed.lastError, 'HTTP 500');
      assert.equal(failed.status, 'active', 'failing only after 24 hours');
      assert.ok(t.app.eventSender.stats.lagSeconds(hook.id) >= 0 && t.app.eventSender.stats.failed > 0);
      await deliver();
      assert.equal(mine().length, 1, 'no retry before its time');
      t.clock.advance(60_000);
      assert.ok(t.app.eventSender.stats.lagSeconds(hook.id) >= 60, 'the held-back entry’s age is the lag');
      await deliver();
      assert.deepEqual(mine().map((r) => r.json.data.resourceName), ['Retry one', 'Retry one', 'Retry two']);
      assert.equal(t.app.eventSender.stats.lagSeconds(hook.id), 0);
      assert.equal(mine()[0]!.headers['webhook-id'], mine()[1]!.headers['webhook-id'], 'the same id on every retry');
      const log = (await call('orgAdminA')({ method: 'GET', url: `${URL_PATH}/${hook.id}/deliveries` })).json();
      assert.deepEqual(log.data.map((d: { outcome: string; attempt: number; responseStatus: number }) => [d.outcome, d.attempt, d.responseStatus]).reverse(),
        [['failed', 1, 500], ['delivered', 2, 200], ['delivered', 1, 200]]);

      // Replay from the chain's first entry: sent again, in order.
      const replay = await call('orgAdminA')({ method: 'POST', url: `${URL_PATH}/${hook.id}/replay`, payload: { fromSeq: 1 } });
      assert.deepEqual([replay.statusCode, replay.json()], [202, { success: true }]);
      receiver.received.length = 0;
      await deliver();
      const again = mine().map((r) => r.json.data.seq as number);
      assert.ok(again.length >= 5, `replayed ${again.length}`);
      assert.deepEqual(again, [...again].sort((a, b) => a - b));
      assert.ok((await auditOf(hook.id)).some((a) => a.action === 'event_destination.replay' && a.details.fromSeq === 1));
      await call('orgAdminA')({ method: 'DELETE', url: `${URL_PATH}/${hook.id}` });
    });

    it('signs with both secrets after a rotation, and sends a test event on demand', async () => {
      const hook = (await create('orgAdminA', { name: 'rotating', kind: 'webhook', url: `${receiver.url}?rotating`, filter: { actions: ['site.update'] } })).json();
      const rotated = await call('orgAdminA')({ method: 'POST', url: `${URL_PATH}/${hook.id}/rotate-secret` });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const { secret } = rotated.json();
      assert.notEqual(secret, hook.secret);
      const test = await call('orgAdminA')({ method: 'POST', url: `${URL_PATH}/${hook.id}/test` });
      assert.equal(test.statusCode, 200, test.body);
      assert.deepEqual([test.json().delivered, test.json().responseStatus, test.json().error], [true, 200, null]);
      const sent = receiver.received.at(-1)!;
      assert.equal(sent.json.type, 'destination.test');
      assert.ok(signatureValid(sent, secret) && signatureValid(sent, hook.secret), 'both secrets sign');
      assert.equal(String(sent.headers['webhook-signature']).split(' ').length, 2);
      const audit = await auditOf(hook.id);
      assert.ok(audit.some((a) => a.action === 'event_destination.rotate_secret'));
      assert.equal(JSON.stringify(audit).includes(secret.slice(6)), false);
      assertProblem(await call('noMfaA')({ method: 'POST', url: `${URL_PATH}/${hook.id}/test` }), 403, 'MFA_REQUIRED');
      await call('orgAdminA')({ method: 'DELETE', url: `${URL_PATH}/${hook.id}` });
    });

    it('sends a partner-wide destination every organization of the partner, present and future', async () => {
      const wide = (await create('partner', { name: 'partner SIEM', kind: 'webhook', url: `${receiver.url}?wide`, partnerId: partner.id, filter: { actions: ['site.create'] } })).json();
      receiver.received.length = 0;
      const later = await createOrg(t.db, partner.id);
      await newSite(orgA.id, 'Wide A');
      const siteB = await call('orgAdminB')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: orgB.id, name: 'Wide B' } });
      assert.equal(siteB.statusCode, 201);
      const siteLater = await call('system')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: later.id, name: 'Wide later' } });
      assert.equal(siteLater.statusCode, 201, siteLater.body);
      await call('system')({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: foreign.id, name: 'Not this partner' } });
      await deliver();
      const names = receiver.received.filter((r) => signatureValid(r, wide.secret)).map((r) => r.json.data.resourceName).sort();
      assert.deepEqual(names, ['Wide A', 'Wide B', 'Wide later']);
      assertProblem(await call('partner')({ method: 'POST', url: `${URL_PATH}/${wide.id}/replay`, payload: { fromSeq: 1 } }), 400, 'VALIDATION_FAILED');
      await call('partner')({ method: 'DELETE', url: `${URL_PATH}/${wide.id}` });
    });

    it('takes a destination over once its holder stops renewing the lease (a crashed instance)', async () => {
      const hook = (await create('orgAdminA', { name: 'orphaned', kind: 'webhook', url: `${receiver.url}?orphaned`, filter: { actions: ['site.create'] } })).json();
      const mine = () => receiver.received.filter((r) => signatureValid(r, hook.secret)).map((r) => r.json.data.resourceName);
      // The lease of an instance that died: nobody renews it, and it runs out in a second.
      await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query(`update event_destinations set lease_owner = 'crashed-instance', lease_until = now() + interval '1 second' where id = $1`, [hook.id]));
      await newSite(orgA.id, 'After the crash');
      await deliver();
      assert.deepEqual(mine(), [], 'nothing sent while the dead instance’s lease runs');
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await t.app.eventSender.runNow();
      assert.deepEqual(mine(), ['After the crash']);
      await call('orgAdminA')({ method: 'DELETE', url: `${URL_PATH}/${hook.id}` });
    });

    it('lets one instance at a time send a destination: two senders never deliver an entry twice', async () => {
      // Instances of one deployment share the key that seals destination secrets: without it, the
      // one that wins the lease could not sign, and would hold the destination without sending.
      const other = await testApp({ backend, db: t.db, env: { OUTBOUND_ALLOW_PRIVATE: 'true', APP_ENCRYPTION_KEY: encryptionKey } });
      try {
        const hook = (await create('orgAdminA', { name: 'shared', kind: 'webhook', url: `${receiver.url}?shared`, filter: { actions: ['site.create'] } })).json();
        receiver.received.length = 0;
        for (let i = 0; i < 6; i++) await newSite(orgA.id, `Shared ${i}`);
        await t.app.auditSealer.sealNow();
        await Promise.all([t.app.eventSender.runNow(), other.app.eventSender.runNow(), t.app.eventSender.runNow()]);
        const ids = () => receiver.received.filter((r) => signatureValid(r, hook.secret)).map((r) => r.headers['webhook-id']);
        // Whichever holds the lease sends; passes of both go on until all six are in (a pass that
        // started before the lease changed hands may find nothing of its own to send).
        for (const deadline = Date.now() + 10_000; ids().length < 6 && Date.now() < deadline;) {
          await Promise.all([t.app.eventSender.runNow(), other.app.eventSender.runNow()]);
        }
        assert.equal(ids().length, 6);
        assert.equal(new Set(ids()).size, 6);
        await call('orgAdminA')({ method: 'DELETE', url: `${URL_PATH}/${hook.id}` });
      } finally {
        await other.close();
      }
    });
  });
}

describe('event destinations: addresses and failing', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let database: Awaited<ReturnType<typeof privateTestDatabase>>;
  before(async () => {
    database = await privateTestDatabase();
    t = await testApp({ db: database.db, env: { OUTBOUND_ALLOW_PRIVATE: 'true' } });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
    await database.drop();
  });

  it('refuses loopback and private addresses unless OUTBOUND_ALLOW_PRIVATE is set', async () => {
    const strict = await testApp({ db: t.db });
    try {
      const org = await createOrg(t.db, (await createPartner(t.db)).id);
      const admin = await loginWithMfa(strict.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), strict.clock);
      for (const url of [receiver.url, 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://[::1]/x', 'https://169.254.169.254/latest', 'syslog+tls://192.168.1.10:6514']) {
        const kind = url.startsWith('syslog') ? 'syslog' : 'webhook';
        assertProblem(await as(strict.app, admin)({ method: 'POST', url: URL_PATH, payload: { name: 'x', kind, url } }), 400, 'DESTINATION_NOT_ALLOWED');
      }
    } finally {
      await strict.close();
    }
  });

  it('marks a destination failing after 24 hours of failure, audited, and active again once it delivers', async () => {
    const org = await createOrg(t.db, (await createPartner(t.db)).id);
    let admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
    // Down before the destination exists: the sender may send its create entry at once.
    receiver.answer(...Array(50).fill(503));
    const hook = (await as(t.app, admin)({ method: 'POST', url: URL_PATH, payload: { name: 'down', kind: 'webhook', url: receiver.url } })).json();
    const pass = async () => {
      await t.app.auditSealer.sealNow();
      await t.app.eventSender.runNow();
    };
    await pass();
    for (let hours = 0; hours < 25; hours++) {
      t.clock.advance(3600_000);
      await pass();
    }
    // The session from before is long expired: a fresh one.
    admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
    const failing = (await as(t.app, admin)({ method: 'GET', url: `${URL_PATH}/${hook.id}` })).json();
    assert.equal(failing.status, 'failing');
    assert.equal(failing.lastError, 'HTTP 503');
    const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
      tx.query<{ n: number }>(`select count(*)::int as n from audit_logs where resource_id = $1 and action = 'event_destination.failing'`, [hook.id]));
    assert.equal(rows[0]!.n, 1);
    // Saved as it is (the console sends the whole form, enabled included): still failing.
    const saved = await as(t.app, admin)({ method: 'PATCH', url: `${URL_PATH}/${hook.id}`, payload: { name: 'down', url: receiver.url, enabled: true } });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(saved.json().status, 'failing', 'only a delivery, or disabling it, ends failing');
    receiver.answer();
    t.clock.advance(3600_000);
    await pass();
    admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock);
    const back = (await as(t.app, admin)({ method: 'GET', url: `${URL_PATH}/${hook.id}` })).json();
    assert.equal(back.status, 'active');
  });

  it('keeps a partner-wide destination failing while one of its chains is stuck, however the others fare', async () => {
    const partner = await createPartner(t.db);
    const [stuck, fine] = [await createOrg(t.db, partner.id), await createOrg(t.db, partner.id)];
    const admin = async () => loginWithMfa(t.app, await createUser(t.db, { scope: 'system' }), t.clock);
    const newSite = async (orgId: string, name: string) => {
      const res = await as(t.app, await admin())({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId, name } });
      assert.equal(res.statusCode, 201, res.body);
    };
    receiver.answerBy((hook) => (hook.data.orgId === stuck.id ? 503 : undefined));
    try {
      const hook = (await as(t.app, await admin())({ method: 'POST', url: URL_PATH, payload: { name: 'partner-wide', kind: 'webhook', url: receiver.url, partnerId: partner.id } })).json();
      const pass = async () => {
        await t.app.auditSealer.sealNow();
        await t.app.eventSender.runNow();
      };
      await newSite(stuck.id, 'Stuck');
      await pass();
      for (let hours = 0; hours < 25; hours++) {
        t.clock.advance(3600_000);
        await newSite(fine.id, `Fine ${hours}`); // the other chain delivers every hour
        await pass();
      }
      const standing = (await as(t.app, await admin())({ method: 'GET', url: `${URL_PATH}/${hook.id}` })).json();
      assert.equal(standing.status, 'failing');
      const { rows } = await withTenant(t.db, SYSTEM_SCOPE, (tx) =>
        tx.query<{ n: number }>(`select count(*)::int as n from audit_logs where resource_id = $1 and action = 'event_destination.failing'`, [hook.id]));
      assert.equal(rows[0]!.n, 1, 'marked failing once, not again at each retry');
      receiver.answerBy(null);
      t.clock.advance(3600_000);
      await pass();
      assert.equal((await as(t.app, await admin())({ method: 'GET', url: `${URL_PATH}/${hook.id}` })).json().status, 'active');
    } finally {
      receiver.answerBy(null);
    }
  });
});

// Without rsyslogd a developer gets a skip; CI must have it (.ci/run installs it).
const rsyslogSkip = !rsyslogdPath() && !process.env.CI ? `${RSYSLOG_MISSING}; skipping` : false;

describe('event destinations: the chain streamed to a real rsyslog over TLS', { skip: rsyslogSkip }, () => {
  let t: TestApp;
  let rsyslog: Rsyslog;
  let database: Awaited<ReturnType<typeof privateTestDatabase>>;
  before(async () => {
    database = await privateTestDatabase();
    t = await testApp({ db: database.db, env: { OUTBOUND_ALLOW_PRIVATE: 'true' } });
    rsyslog = await startRsyslog();
  });
  after(async () => {
    await rsyslog?.stop();
    await t?.close();
    await database?.drop();
  });

  it('delivers every entry once, in seq order, each verifying against the chain', async () => {
    const org = await createOrg(t.db, (await createPartner(t.db)).id);
    const admin = as(t.app, await loginWithMfa(t.app, await createUser(t.db, { scope: 'organization', orgId: org.id }), t.clock));
    await t.app.auditSealer.sealNow(); // the sign-in's entries are sealed before the destination exists
    const made = await admin({
      method: 'POST', url: URL_PATH,
      payload: { name: 'SIEM over TLS', kind: 'syslog', url: `syslog+tls://127.0.0.1:${rsyslog.tlsPort}`, caCertificate: rsyslog.caCertificate },
    });
    assert.equal(made.statusCode, 201, made.body);
    for (let i = 0; i < 12; i++) {
      const res = await admin({ method: 'POST', url: '/api/v1/orgs/sites', payload: { orgId: org.id, name: `Syslog site ${i} — Zoë` } });
      assert.equal(res.statusCode, 201, res.body);
    }
    await t.app.auditSealer.sealNow();
    await t.app.eventSender.runNow();
    const received = (await rsyslog.waitForMessages(13)).filter((m) => m.includes(org.id));
    // <PRI>1 TIMESTAMP HOSTNAME dms - MSGID - MSG
    const parsed = received.map((m) => {
      const match = /^<(\d+)>1 (\S+) (\S+) dms - (\S+) - (.*)$/s.exec(m);
      assert.ok(match, `an RFC 5424 message: ${m.slice(0, 120)}`);
      return { pri: Number(match[1]), msgId: match[4]!, body: JSON.parse(match[5]!) as { type: string; timestamp: string; data: ChainFields & { checksum: string } } };
    });
    const data = parsed.map((p) => p.body.data);
    assert.equal(data.length, 13, 'the destination’s create and twelve site creates');
    assert.deepEqual(parsed.map((p) => p.msgId), parsed.map((p) => p.body.type.slice(0, 32)));
    assert.ok(parsed.every((p) => p.pri === 13 * 8 + 6), 'log audit, informational');
    for (let i = 0; i < data.length; i++) {
      assert.equal(checksumOf(data[i]!), data[i]!.checksum, `entry ${data[i]!.seq} verifies`);
      if (i > 0) {
        assert.equal(data[i]!.seq, data[i - 1]!.seq + 1, 'in seq order, nothing missing or twice');
        assert.equal(data[i]!.prevChecksum, data[i - 1]!.checksum);
      }
    }
    const verify = await admin({ method: 'GET', url: `/api/v1/audit-logs/verify?orgId=${org.id}` });
    assert.equal(verify.json().valid, true);
    const head = (await admin({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=${org.id}&limit=1` })).json().data[0];
    assert.equal(data.at(-1)!.checksum, head.checksum, 'up to the chain’s head');
  });
});
