// The response shapes of audit entries: the /logs shape (with every chain field, API.md §8) and the
// older `entries` shape of GET /audit-logs/ (SPEC).
import type { Static } from 'typebox';
import { categoryOf, type AuditAction } from './actions.js';
import type { AuditRowWithUser } from './audit.repo.js';
import type { LegacyEntry, LogEntry } from './schemas.js';

// The schemas document the catalogue; a stored row may hold an action outside it (written before
// it, or by another writer), and the response serialiser sends it unchanged.
const actionOf = (row: AuditRowWithUser) => row.action as AuditAction;

export function logEntry(row: AuditRowWithUser): Static<typeof LogEntry> {
  return {
    id: row.id,
    timestamp: row.timestamp.toISOString(),
    user: { id: row.actor_id, name: row.user_name, email: row.actor_email, role: row.user_role },
    action: actionOf(row),
    resource: { type: row.resource_type, id: row.resource_id, name: row.resource_name },
    category: categoryOf(row.action),
    result: row.result as Static<typeof LogEntry>['result'],
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    details: row.details,
    orgId: row.org_id,
    seq: row.seq,
    actorType: row.actor_type as Static<typeof LogEntry>['actorType'],
    actorId: row.actor_id,
    actorEmail: row.actor_email,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    resourceName: row.resource_name,
    errorMessage: row.error_message,
    checksum: row.checksum,
    prevChecksum: row.prev_checksum,
  };
}

const asObject = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

export function legacyEntry(row: AuditRowWithUser): Static<typeof LegacyEntry> {
  return {
    id: row.id,
    timestamp: row.timestamp.toISOString(),
    action: actionOf(row),
    resource: row.resource_name ?? row.resource_type ?? '',
    resourceType: row.resource_type,
    details: JSON.stringify(row.details),
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    sessionId: null,
    user: { name: row.user_name ?? row.actor_email ?? row.actor_type, email: row.actor_email, role: row.user_role, department: null },
    changes: { before: asObject(row.details.before), after: asObject(row.details.after) },
  };
}
