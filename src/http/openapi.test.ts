// The served OpenAPI document is fit for client generators: Redocly's recommended rules pass with
// no problem at all, every operation has a stable unique operationId, public routes say they take
// no credential, and list roots carry no trailing slash.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { testApp, type TestApp } from '../../test/support/app.js';

type Operation = { operationId?: string; security?: Record<string, string[]>[] };
type Document = { paths: Record<string, Record<string, Operation>>; servers?: unknown[] };

// Routes a client calls with no credential (sign-in, enrolment, probes).
const PUBLIC_OPERATIONS = ['login', 'verifyMfa', 'refreshSession', 'logout', 'registerPartner', 'enrollAgent', 'getHealth', 'getReadiness',
  'discoverSso', 'ssoCallback', 'exchangeSsoCode', 'acceptInvitation', 'forgotPassword', 'resetPassword'];

describe('the OpenAPI document', () => {
  let t: TestApp;
  let source: string;
  let doc: Document;
  const operations = () => Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

  before(async () => {
    t = await testApp({ backend: 'pglite' });
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    source = res.body;
    doc = res.json() as Document;
  });
  after(() => t.close());

  it('passes Redocly’s recommended rules without an error or a warning', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
    const described = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
    // The one exception: the agent's WebSocket succeeds with 101 Switching Protocols, never a 2xx.
    const upgrade = 'warn operation-2xx-response: Operation must have at least one `2XX` response. at #/paths/~1api~1v1~1agents~1{id}~1ws/get/responses';
    assert.deepEqual(described.filter((line) => line !== upgrade), []);
  });

  it('gives every operation a unique operationId in camelCase', () => {
    const ids = operations().map(({ path, method, op }) => {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${method.toUpperCase()} ${path} has no usable operationId`);
      return op.operationId!;
    });
    assert.equal(new Set(ids).size, ids.length, 'operationIds repeat');
  });

  it('declares security on every operation: none on public routes, a credential on the rest', () => {
    for (const { path, method, op } of operations()) {
      assert.ok(Array.isArray(op.security), `${method.toUpperCase()} ${path} declares no security`);
      const isPublic = PUBLIC_OPERATIONS.includes(op.operationId!);
      assert.equal(op.security!.length === 0, isPublic, `${method.toUpperCase()} ${path}: security ${JSON.stringify(op.security)}`);
    }
  });

  // fast-json-stringify writes an untyped enum through JSON.stringify and picks an anyOf branch by
  // running the validator on the value: every response paid for both on each such field.
  it('types every string enum and makes nullable primitives type lists, not unions', () => {
    const found: string[] = [];
    const visit = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${at}/${i}`));
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string') && schema.type !== 'string') found.push(`untyped enum at ${at}`);
      const branches = schema.anyOf as Record<string, unknown>[] | undefined;
      if (branches?.length === 2 && branches.some((b) => b.type === 'null')) {
        const other = branches.find((b) => b.type !== 'null')!;
        if (['string', 'integer', 'number', 'boolean'].includes(String(other.type)) && other.enum === undefined) found.push(`nullable union at ${at}`);
      }
      for (const [key, value] of Object.entries(schema)) visit(value, `${at}/${key}`);
    };
    visit(doc, '#');
    assert.deepEqual(found, []);
  });

  // API.md §2: errors are served as application/problem+json, and the document says so.
  it('files every error response under application/problem+json, with the Problem schema', () => {
    const wrong: string[] = [];
    for (const { path, method, op } of operations()) {
      const responses = (op as { responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }).responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        if (!/^[45]/.test(status)) continue;
        const types = Object.keys(response.content ?? {});
        const problem = response.content?.['application/problem+json']?.schema?.$ref;
        if (types.join() !== 'application/problem+json' || !problem?.endsWith('/Problem')) wrong.push(`${method.toUpperCase()} ${path} ${status}: ${types.join()} ${problem ?? ''}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('documents the agent WebSocket (API.md §7), which the WebSocket plugin hides, as the GET that upgrades', () => {
    const socket = doc.paths['/api/v1/agents/{id}/ws']?.get as (Operation & { responses?: Record<string, unknown> }) | undefined;
    assert.equal(socket?.operationId, 'connectAgentSocket');
    assert.deepEqual(socket?.security, [{ agentToken: [] }]);
    assert.ok(socket?.responses?.['101']);
  });

  it('names list roots without a trailing slash and has a servers entry', () => {
    for (const path of Object.keys(doc.paths)) assert.ok(!path.endsWith('/'), `${path} ends with a slash`);
    assert.ok((doc.servers ?? []).length > 0);
  });

  it('still answers list roots with a trailing slash, as SPEC writes them', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/devices/' });
    assert.equal(res.statusCode, 401);
  });
});
