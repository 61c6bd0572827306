// Hostile input, swept from the served OpenAPI document: every operation gets generated hostile
// values (test/support/hostile-requests.ts) in its path, query and JSON body, sent with credentials that reach
// its handler (an MFA-verified system admin, an API key holding `*`, an agent token), on PGlite and
// on PostgreSQL. Every answer must be below 500, and every 4xx a problem+json with a code
// (API.md §2). The runs are seeded, so a failure replays; FUZZ_RUNS and FUZZ_SEED widen or move them
// (up to about 250 runs both backends stay inside the runner's 5-minute limit per file on 2 cores).
// What the sweep once found stays below as explicit requests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { backends, testApp, type TestApp } from '../../test/support/app.js';
import { createApiKey, createDevice, createEnrollmentKey, createOrg, createPartner, createSite, createUser } from '../../test/support/factory.js';
import { as, assertProblem, bearer, loginWithMfa } from '../../test/support/clients.js';
import { FuzzRequest, judge, operationsOf, RequestBuilder, seedFor, type Credential, type OpenApi, type OperationModel } from '../../test/support/hostile-requests.js';
import { MAX_JSON_DEPTH } from './validation.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const METRICS_TOKEN = 'metrics-token-for-the-fuzz-sweep-0123456789';
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_115);

type Headers = Record<string, string>;

interface World {
  headers: Record<Credential, Headers>;
  /** A partner admin's MFA-verified session, for the routes a system admin has no business on (/partners/me). */
  partnerJwt: Headers;
  ids: {
    partnerId: string; orgId: string; siteId: string; otherPartnerId: string; otherOrgId: string; userId: string; apiKeyId: string;
    enrollmentKeyId: string; deviceId: string; agentId: string; auditEntryId: string; enrollmentKey: string; eventDestinationId: string; invitationId: string;
  };
}

/**
 * Two tenants: the one the credentials live in (with a second key, device, user … for the routes
 * that change or remove what they name) and a second partner whose partner and organization
 * routes may change, so that no fuzzed write takes away the credentials' own reach.
 */
async function buildWorld(t: TestApp): Promise<World> {
  const partner = await createPartner(t.db);
  const org = await createOrg(t.db, partner.id);
  const site = await createSite(t.db, org.id);
  const otherPartner = await createPartner(t.db);
  const otherOrg = await createOrg(t.db, otherPartner.id);
  const admin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'system' }), t.clock);
  const partnerAdmin = await loginWithMfa(t.app, await createUser(t.db, { scope: 'partner', partnerId: partner.id }), t.clock);
  const user = await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'readonly' });
  const key = await createApiKey(t.db, org.id, { scopes: ['*'], rateLimit: 100_000 });
  const targetKey = await createApiKey(t.db, org.id, { scopes: ['devices:read'] });
  const enrollment = await createEnrollmentKey(t.db, org.id, { pepper: t.config.enrollmentKeyPepper, siteId: site.id, maxUsage: null });
  const targetEnrollment = await createEnrollmentKey(t.db, org.id, { pepper: t.config.enrollmentKeyPepper });
  const agent = await createDevice(t.db, org.id, { siteId: site.id });
  const device = await createDevice(t.db, org.id, { siteId: site.id });
  const renamed = await as(t.app, admin)({ method: 'PATCH', url: `/api/v1/users/${user.id}`, payload: { name: 'Fuzz target' } });
  assert.equal(renamed.statusCode, 200, renamed.body);
  const destination = await as(t.app, admin)({
    method: 'POST', url: '/api/v1/event-destinations', payload: { orgId: org.id, name: 'Fuzz target', kind: 'syslog', url: 'syslog+tcp://siem.example:6514', enabled: false },
  });
  assert.equal(destination.statusCode, 201, destination.body);
  const invitation = await as(t.app, admin)({
    method: 'POST', url: '/api/v1/users/invitations', payload: { email: `fuzz-invitee-${org.id.slice(0, 8)}@example.test`, name: 'Fuzz invitee', scope: 'organization', role: 'readonly', orgId: org.id },
  });
  assert.equal(invitation.statusCode, 201, invitation.body);
  const entries = await as(t.app, admin)({ method: 'GET', url: `/api/v1/audit-logs/logs?orgId=${org.id}&limit=1` });
  assert.equal(entries.statusCode, 200, entries.body);
  return {
    headers: {
      none: {}, jwt: bearer(admin), 'api-key': { 'x-api-key': key.key }, agent: { authorization: `Bearer ${agent.authToken}` },
      metrics: { authorization: `Bearer ${METRICS_TOKEN}` },
    },
    partnerJwt: bearer(partnerAdmin),
    ids: {
      partnerId: partner.id, orgId: org.id, siteId: site.id, otherPartnerId: otherPartner.id, otherOrgId: otherOrg.id, userId: user.id,
      apiKeyId: targetKey.id, enrollmentKeyId: targetEnrollment.id, deviceId: device.id, agentId: agent.agentId,
      auditEntryId: (entries.json().data as { id: string }[])[0]!.id, enrollmentKey: enrollment.key, eventDestinationId: destination.json().id,
      invitationId: invitation.json().id,
    },
  };
}

function fixtures(w: World) {
  const { ids } = w;
  const byCollection: Record<string, string> = {
    users: ids.userId, partners: ids.otherPartnerId, organizations: ids.otherOrgId, sites: ids.siteId, 'api-keys': ids.apiKeyId,
    'enrollment-keys': ids.enrollmentKeyId, devices: ids.deviceId, agents: ids.agentId, logs: ids.auditEntryId,
    'event-destinations': ids.eventDestinationId, sessions: ids.userId, invitations: ids.invitationId,
  };
  return {
    named: {
      orgId: ids.orgId, organizationId: ids.orgId, partnerId: ids.partnerId, siteId: ids.siteId, enrollmentKey: ids.enrollmentKey,
      orgIds: [ids.orgId], organizationOrder: [ids.orgId],
    },
    pathValue(path: string, name: string): string {
      if (name === 'deviceId') return ids.deviceId;
      if (name === 'name') return 'System';
      if (name === 'recordId') return '1';
      const collection = /\/([^/]+)\/\{id\}/.exec(path)?.[1];
      const value = collection ? byCollection[collection] : undefined;
      if (!value) throw new Error(`no value for path parameter {${name}} of ${path}: add one to fixtures()`);
      return value;
    },
  };
}

async function send(t: TestApp, headers: Record<Credential, Headers>, request: FuzzRequest) {
  return t.app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: { ...headers[request.credential], ...(request.payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  });
}

/**
 * What the sweep found (seed 20260115), and the review's reports, as fixed requests: before the
 * fixes each was a 500 or an answer outside API.md §2, as `was` says.
 */
interface RegressionCase {
  name: string;
  was: string;
  request: (ids: World['ids']) => { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; credential: Credential; payload?: string };
  status: number;
  code?: string;
}

const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const refused = (name: string, was: string, request: RegressionCase['request']): RegressionCase => ({ name, was, request, status: 400, code: 'VALIDATION_FAILED' });
const get = (url: string, credential: Credential = 'jwt') => ({ method: 'GET' as const, url, credential });
const patchSite = (ids: World['ids'], payload: string) => ({ method: 'PATCH' as const, url: `/api/v1/orgs/sites/${ids.siteId}`, credential: 'jwt' as const, payload });

const REGRESSIONS: RegressionCase[] = [
  refused('NUL in a site name', '500: PostgreSQL 22021 (text cannot hold NUL)', (ids) => patchSite(ids, '{"name":"\\u0012\\u0001\\"\\ud800\\u0000\\""}')),
  refused('NUL in organization settings (jsonb)', '500: PostgreSQL 22P05 (jsonb cannot hold \\u0000)', (ids) => ({
    method: 'PATCH', url: `/api/v1/orgs/organizations/${ids.otherOrgId}`, credential: 'jwt', payload: '{"settings":{"٫\\u0015@0":"a\\u0000b"}}',
  })),
  refused('NUL and lone surrogates in a new organization’s billingContact keys and values', '500: PostgreSQL 22P05', (ids) => ({
    method: 'POST', url: '/api/v1/orgs/organizations', credential: 'jwt',
    payload: `{"name":"Fuzz","slug":"fuzz-billing","partnerId":"${ids.partnerId}","billingContact":{"":"admin@example.test\\u0000","\\udfff\\udc00\\u000béa9":1e-400}}`,
  })),
  refused('NUL in an audit filter (action=a%00b) with an API key', '500: PostgreSQL 22021', (ids) => get(`/api/v1/audit-logs?orgId=${ids.orgId}&action=a%00b`, 'api-key')),
  refused('NUL in an agent id in the path', '404, from the agent lookup; now refused like every other path value', () => ({
    method: 'POST', url: '/api/v1/agents/a%00b/heartbeat', credential: 'agent', payload: '{}',
  })),
  refused('site settings nested 100,000 deep', '500 (the security review)', (ids) => patchSite(ids, `{"settings":${deep(100_000)}}`)),
  refused('a body one level deeper than the limit', 'accepted', (ids) => patchSite(ids, `{"settings":${deep(MAX_JSON_DEPTH)}}`)),
  { name: 'a body exactly at the depth limit', was: 'accepted (still is)', request: (ids) => patchSite(ids, `{"settings":${deep(MAX_JSON_DEPTH - 1)}}`), status: 200 },
  refused('a leap second (23:59:60) in an audit range', '500 on the embedded database: RFC 3339 allows it, a JavaScript Date cannot hold it', (ids) =>
    get(`/api/v1/audit-logs/logs?orgId=${ids.orgId}&from=2026-06-30T23:59:60Z`)),
  refused('a leap second in an organization’s contract start', '500 on both databases (Invalid Date)', (ids) => ({
    method: 'PATCH', url: `/api/v1/orgs/organizations/${ids.otherOrgId}`, credential: 'jwt', payload: '{"contractStart":"2026-12-31T23:59:60Z"}',
  })),
  refused('a leap second in an API key’s expiry', '500 on the embedded database', (ids) => ({
    method: 'POST', url: '/api/v1/api-keys', credential: 'jwt',
    payload: `{"orgId":"${ids.orgId}","name":"Leap","scopes":["devices:read"],"expiresAt":"2030-06-30T23:59:60Z"}`,
  })),
  refused('limit=1e309', '200: coerced to Infinity and clamped (the review)', () => get('/api/v1/orgs/partners?limit=1e309')),
  refused('page=2^53+1', '200: read as 2^53 and clamped', (ids) => get(`/api/v1/orgs/sites?orgId=${ids.orgId}&page=9007199254740993`)),
  refused('an export limit of Infinity', '200: coerced to Infinity and clamped', (ids) => get(`/api/v1/audit-logs/export?orgId=${ids.orgId}&limit=Infinity`)),
  refused('a hexadecimal page size (0x10)', '200: Number() read it as 16', () => get('/api/v1/orgs/partners?limit=0x10')),
  refused('an exponent as a page (1e3)', '200: read as 1000', () => get('/api/v1/orgs/partners?page=1e3')),
  refused('a page size with a trailing point (5.)', '200: read as 5', (ids) => get(`/api/v1/orgs/sites?orgId=${ids.orgId}&limit=5.`)),
  refused('a page size of one space', '200: read as 0 and clamped to 1 (not empty, so not absent)', () => get('/api/v1/devices?limit=%20')),
  refused('a binary fromSeq (0b11)', '200: read as 3', (ids) => get(`/api/v1/audit-logs/verify?orgId=${ids.orgId}&fromSeq=0b11`)),
  refused('Arabic-Indic digits as a page size', '400 (still is)', () => get(`/api/v1/devices?limit=${encodeURIComponent('١٢٣')}`)),
  refused('a broken percent-escape in a path parameter', '400 as application/json without a problem code (FST_ERR_BAD_URL)', () => get('/api/v1/orgs/sites/%E0%A4%A')),
  refused('a path parameter over 100 characters', '414 as application/json without a problem code (FST_ERR_MAX_PARAM_LENGTH)', () => get(`/api/v1/devices/${'x'.repeat(300)}`)),
  {
    name: 'deleting a site that still has devices', was: '500: PostgreSQL 23503 (devices reference the site)', status: 409, code: 'CONFLICT',
    request: (ids) => ({ method: 'DELETE', url: `/api/v1/orgs/sites/${ids.siteId}`, credential: 'jwt' }),
  },
  refused('a lone surrogate in a user name', 'stored as U+FFFD without a word', (ids) => ({
    method: 'PATCH', url: `/api/v1/users/${ids.userId}`, credential: 'jwt', payload: '{"name":"x\\udfffy"}',
  })),
  {
    name: 'NUL, a lone surrogate and 1e309 from an agent: stored cleaned', was: '500: PostgreSQL 22021 (agentVersion)', status: 200,
    request: (ids) => ({
      method: 'POST', url: `/api/v1/agents/${ids.agentId}/heartbeat`, credential: 'agent',
      payload: '{"agentVersion":"1.0\\u0000\\ud800","metrics":{"cpu\\u0000":1e309,"disk":"a\\u0000b"}}',
    }),
  },
];

// Writes that remove what they name run last, so the other operations still find their targets.
const order = (op: OperationModel) => (op.method === 'DELETE' ? 1 : 0);

for (const backend of backends()) {
  describe(`hostile input on ${backend}`, () => {
    let t: TestApp;
    let w: World;
    let doc: OpenApi;
    // The server's error log, so a failure names the fault behind a 500 and not only its request id.
    const errors = new Map<string, string>();
    const explain = (problem: string) => {
      const id = /"requestId":"([^"]+)"/.exec(problem)?.[1];
      return id && errors.has(id) ? `${problem}\n  logged: ${errors.get(id)}` : problem;
    };
    before(async () => {
      const logStream = new PassThrough();
      let pending = '';
      logStream.on('data', (chunk: Buffer) => {
        const lines = (pending + chunk.toString()).split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          const entry = JSON.parse(line) as { reqId?: string; err?: { type?: string; message?: string; code?: string } };
          if (entry.reqId && entry.err) errors.set(entry.reqId, `${entry.err.type}: ${entry.err.code ?? ''} ${entry.err.message?.slice(0, 300)}`);
        }
      });
      t = await testApp({ backend, env: { ALLOW_PARTNER_SIGNUP: 'true', LOG_LEVEL: 'error', METRICS_TOKEN }, logStream });
      doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
      w = await buildWorld(t);
    });
    after(() => t?.close());

    for (const c of REGRESSIONS) {
      it(`regression: ${c.name} → ${c.status}${c.code ? ` ${c.code}` : ''} (was ${c.was})`, async () => {
        const { credential, ...request } = c.request(w.ids);
        const res = await send(t, w.headers, new FuzzRequest(request.method, request.url, credential, request.payload, []));
        assert.ok(res.statusCode < 500, explain(res.body));
        if (c.code) assertProblem(res, c.status, c.code);
        else assert.equal(res.statusCode, c.status, explain(res.body));
      });
    }

    it(`sweeps every operation of /openapi.json (${RUNS} runs each, seed ${SEED})`, async (ctx) => {
      const builder = new RequestBuilder(doc, fixtures(w));
      const operations = operationsOf(doc).sort((x, y) => order(x) - order(y));
      assert.ok(operations.length > 50, `only ${operations.length} operations in the document`);
      const started = Date.now();
      /**
       * The variant of an operation's valid request that gets furthest into its handler: with or
       * without the optional fields the fixtures name, as the system admin or a partner admin.
       * It must get past authentication, or the sweep of the operation tests nothing.
       */
      const reachingBase = async (op: OperationModel) => {
        const jwts = op.credentials.includes('jwt') ? [w.headers.jwt, w.partnerJwt] : [w.headers.jwt];
        const variants = jwts.flatMap((jwt) => [true, false].map((withNamed) => ({ withNamed, headers: { ...w.headers, jwt } })));
        if (op.method === 'DELETE') return { ...variants[0]!, status: 0 }; // would remove its target
        let first: (typeof variants)[number] & { status: number } | undefined;
        for (const variant of variants) {
          const res = await send(t, variant.headers, builder.build(op, op.credentials[0]!, [], variant.withNamed));
          assert.equal(explain(judge(res) ?? ''), '');
          if (op.credentials[0] !== 'none') assert.notEqual(res.statusCode, 401, `${op.key}: the credential does not reach the handler: ${res.body}`);
          first ??= { ...variant, status: res.statusCode };
          if (res.statusCode < 400) return { ...variant, status: res.statusCode };
        }
        return first!;
      };

      for (const op of operations) {
        await ctx.test(op.key, async () => {
          const base = await reachingBase(op);
          const statuses = new Map<number, number>();
          await fc.assert(
            fc.asyncProperty(builder.arbitrary(op, base.withNamed), async (request) => {
              const res = await send(t, base.headers, request);
              statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
              const problem = judge(res);
              if (problem) throw new Error(explain(problem));
            }),
            { numRuns: RUNS, seed: seedFor(SEED, op.key), endOnFailure: !process.env.FUZZ_SHRINK },
          );
          const as = base.headers.jwt === w.partnerJwt ? ' as partner admin' : '';
          ctx.diagnostic(`${op.key}: valid request ${base.status}${as}; fuzzed ${[...statuses].sort().map(([status, n]) => `${status}×${n}`).join(' ')}`);
        });
      }
      ctx.diagnostic(`${operations.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    });
  });
}
