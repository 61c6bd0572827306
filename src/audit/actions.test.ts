// The catalogue of audit actions against SPEC "Events": the report lists name only catalogue
// actions, each action's category is the one SPEC's prefix table gives, nothing is listed twice;
// and responses still carry a stored action the catalogue does not hold. No database.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import {
  AUDIT_ACTIONS, AUDIT_ACTION_NAMES, COMPLIANCE_ACTIONS, SECURITY_EVENT_ACTIONS, categoryByPrefix, categoryOf,
} from './actions.js';
import { LogEntry } from './schemas.js';

function repeated(names: readonly string[]): string[] {
  return names.filter((name, i) => names.indexOf(name) !== i);
}

describe('audit action catalogue', () => {
  it('lists every action once', () => {
    // Besides being a mistake, a duplicate in the enum makes Fastify refuse to build the audit routes.
    assert.deepEqual(repeated(AUDIT_ACTION_NAMES), []);
  });

  it('holds every action the security-event and compliance reports count, each listed once', () => {
    const known = new Set<string>(AUDIT_ACTION_NAMES);
    for (const [report, list] of [['security events', SECURITY_EVENT_ACTIONS], ['compliance', COMPLIANCE_ACTIONS]] as const) {
      assert.deepEqual(list.filter((action) => !known.has(action)), [], `${report}: actions missing from the catalogue`);
      assert.deepEqual(repeated(list), [], `${report}: actions listed twice`);
    }
  });

  it('gives each action the category of SPEC\'s prefix table', () => {
    const wrong = AUDIT_ACTIONS.filter((entry) => entry.category !== categoryByPrefix(entry.action));
    assert.deepEqual(wrong.map((e) => `${e.action}: ${e.category}`), []);
  });

  it('names actions the column stores whole', () => {
    // The recorder clips an action to 100 characters (SPEC string(100)): a longer one would never match a report.
    assert.deepEqual(AUDIT_ACTION_NAMES.filter((name) => !/^[a-z_]+(\.[a-z_]+)+$/.test(name) || name.length > 100), []);
  });

  it('reads SPEC\'s prefix table: the longest prefix wins, anything else is system', () => {
    const cases: [string, string][] = [
      ['user.login', 'authentication'], ['user.login.failed', 'authentication'], ['user.logout', 'authentication'],
      ['user.permission.change', 'authentication'], ['user.create', 'system'], ['device.eventlogs.query', 'device'],
      ['script.execute', 'automation'], ['policy.evaluate', 'policy'], ['automation.policy.evaluate', 'policy'],
      ['automation.run', 'system'], ['alert.fire', 'alert'], ['data.export', 'compliance'],
      ['organization.update', 'organization'], ['api_key.create', 'system'], ['devices', 'system'],
    ];
    for (const [action, category] of cases) assert.equal(categoryByPrefix(action), category, action);
  });

  it('categorizes a stored action outside the catalogue by prefix', () => {
    assert.equal(categoryOf('device.reboot'), 'device');
    assert.equal(categoryOf('test.event'), 'system');
  });

  it('leaves a stored action outside the catalogue as it is in a response', async () => {
    // The OpenAPI document gives `action` the catalogue's enum; the serialiser must not drop or alter older rows.
    const app = Fastify();
    const entry = {
      id: '00000000-0000-4000-8000-000000000001', timestamp: '2025-03-01T00:00:00.000Z', user: { id: null, name: null, email: null, role: null },
      action: 'legacy.removed_action', resource: { type: null, id: null, name: null }, category: 'system', result: 'success',
      ipAddress: null, userAgent: null, details: {}, orgId: null, seq: null, actorType: 'system', actorId: null, actorEmail: null,
      resourceType: null, resourceId: null, resourceName: null, errorMessage: null, checksum: null, prevChecksum: null,
    };
    app.get('/entry', { schema: { response: { 200: LogEntry } } }, async () => entry);
    try {
      const res = await app.inject({ method: 'GET', url: '/entry' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), entry);
    } finally {
      await app.close();
    }
  });
});
