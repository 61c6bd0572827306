// The catalogue of audit action names. `AuditEvent.action` and the report lists are typed by it, so
// a misspelt action fails to compile instead of silently missing from a compliance report.

export const AUDIT_CATEGORIES = ['authentication', 'device', 'automation', 'policy', 'alert', 'compliance', 'organization', 'system'] as const;
export type AuditCategory = (typeof AUDIT_CATEGORIES)[number];

// SPEC "Categories by action prefix" (used by reporting), row by row; every other action is `system`.
export const CATEGORY_PREFIXES: Readonly<Record<Exclude<AuditCategory, 'system'>, readonly string[]>> = {
  authentication: ['user.login', 'user.logout', 'user.permission'],
  device: ['device.'],
  automation: ['script.'],
  policy: ['policy.', 'automation.policy.'],
  alert: ['alert.'],
  compliance: ['data.'],
  organization: ['organization.'],
};

const PREFIXES = Object.entries(CATEGORY_PREFIXES)
  .flatMap(([category, prefixes]) => prefixes.map((prefix) => ({ prefix, category: category as AuditCategory })))
  .sort((a, b) => b.prefix.length - a.prefix.length);

/** The category SPEC's prefix table gives an action; the longest matching prefix wins. */
export function categoryByPrefix(action: string): AuditCategory {
  return PREFIXES.find(({ prefix }) => action.startsWith(prefix))?.category ?? 'system';
}

/**
 * Who records an action: `service`, this service; `external`, modules SPEC names but that are not
 * built here (policy engine, scripting, data access), listed because SPEC's reports count them.
 * A feature that records a new action adds it here first.
 */
export type AuditActionOrigin = 'service' | 'external';

function actions<const A extends string>(origin: AuditActionOrigin, category: AuditCategory, names: readonly A[]) {
  return names.map((action) => ({ action, category, origin }));
}

export const AUDIT_ACTIONS = Object.freeze([
  // SPEC "Events"
  ...actions('service', 'system', ['api_key.create', 'api_key.update', 'api_key.rotate', 'api_key.revoke']),
  ...actions('service', 'system', ['enrollment_key.create', 'enrollment_key.rotate', 'enrollment_key.delete']),
  ...actions('service', 'system', ['partner.create', 'partner.update', 'partner.delete', 'partner.settings.update']),
  ...actions('service', 'organization', ['organization.create', 'organization.update', 'organization.delete']),
  ...actions('service', 'system', ['site.create', 'site.update', 'site.delete']),
  ...actions('service', 'system', ['agent.eventlogs.submit', 'agent.source.ip.changed']),
  // Users, sessions and MFA (API.md §3, §8)
  ...actions('service', 'authentication', ['user.login', 'user.login.failed', 'user.logout', 'user.permission.change']),
  ...actions('service', 'system', ['user.create', 'user.update', 'user.delete', 'user.mfa.enable']),
  // Identity beyond passwords (API.md §10)
  ...actions('service', 'system', [
    'user.invite', 'user.invitation.accept', 'user.invitation.delete', 'user.password.reset', 'user.password.change',
    'user.mfa.recovery_codes', 'user.mfa.recovery_code_used', 'user.session.revoke',
  ]),
  // Devices (SPEC "Events" example, API.md §6-§7)
  ...actions('service', 'device', ['device.create', 'device.update', 'device.delete', 'device.eventlogs.query']),
  // The audit log itself (API.md §8)
  ...actions('service', 'system', ['audit.retention.update']),
  ...actions('service', 'compliance', ['data.export']),
  // Outbound event delivery (API.md §9)
  ...actions('service', 'system', [
    'event_destination.create', 'event_destination.update', 'event_destination.delete', 'event_destination.rotate_secret',
    'event_destination.replay', 'event_destination.failing',
  ]),
  // Recorded by modules not built here; SPEC's security-event and compliance reports count them.
  ...actions('external', 'policy', ['policy.create', 'policy.update', 'policy.evaluate', 'automation.policy.evaluate']),
  ...actions('external', 'automation', ['script.execute']),
  ...actions('external', 'compliance', ['data.access']),
]);

export type AuditAction = (typeof AUDIT_ACTIONS)[number]['action'];

export const AUDIT_ACTION_NAMES: readonly AuditAction[] = AUDIT_ACTIONS.map((entry) => entry.action);

const CATEGORY_OF: ReadonlyMap<string, AuditCategory> = new Map(AUDIT_ACTIONS.map((entry) => [entry.action, entry.category]));

/** An entry's category: the catalogue's, or by prefix for a stored action the catalogue does not hold. */
export function categoryOf(action: string): AuditCategory {
  return CATEGORY_OF.get(action) ?? categoryByPrefix(action);
}

// SPEC "Events": the two report lists, exactly.
export const SECURITY_EVENT_ACTIONS: readonly AuditAction[] = [
  'user.login', 'user.login.failed', 'user.permission.change', 'policy.update', 'policy.create', 'policy.evaluate',
  'automation.policy.evaluate', 'agent.source.ip.changed',
];
export const COMPLIANCE_ACTIONS: readonly AuditAction[] = [
  'data.access', 'data.export', 'device.create', 'device.delete', 'policy.update', 'policy.evaluate',
  'automation.policy.evaluate', 'script.execute', 'organization.update',
];
