// Request and response schemas of /audit-logs.
import { Type, type Static } from 'typebox';
import { IdParams, Nullable, Uuid, StringEnum } from '../http/common-schemas.js';
import { PaginationQuery, Paginated, PaginationSchema } from '../http/pagination.js';
import { AUDIT_ACTION_NAMES, AUDIT_CATEGORIES } from './actions.js';

const Text = Type.String({ maxLength: 255 });

export const OrgIdFilter = Type.Union([Uuid, Type.Literal('platform')], {
  description: 'Partner and system scope: one organization; system scope: "platform" for events with no organization',
});

export const AuditListQuery = Type.Object({
  ...PaginationQuery,
  user: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive substring of the actor e-mail or user name' })),
  action: Type.Optional(Type.String({ maxLength: 100, description: 'Case-insensitive substring of the action' })),
  resource: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive substring of the resource type or name' })),
  from: Type.Optional(Type.String({ format: 'date-time' })),
  to: Type.Optional(Type.String({ format: 'date-time' })),
  orgId: Type.Optional(OrgIdFilter),
});
export type AuditListQuery = Static<typeof AuditListQuery>;

export const AuditSearchQuery = Type.Object({
  ...AuditListQuery.properties,
  q: Type.String({ minLength: 1, maxLength: 255, description: 'Case-insensitive substring of action, actor e-mail, resource type or name, or details' }),
});

// Named ($id) so the OpenAPI document holds them once as components and the console's generated
// client gets the unions. Only responses use them: responses are not validated, so a stored action
// outside the catalogue is still sent as it is; the `action` filters stay substrings.
export const AuditActionSchema = StringEnum(AUDIT_ACTION_NAMES, { $id: 'AuditAction', description: 'An audit action name from the catalogue' });
export const AuditCategorySchema = StringEnum(AUDIT_CATEGORIES, { $id: 'AuditCategory', description: 'SPEC category by action prefix' });

export const LogEntry = Type.Object({
  id: Uuid,
  timestamp: Type.String({ format: 'date-time' }),
  user: Type.Object({ id: Nullable(Uuid), name: Nullable(Type.String()), email: Nullable(Type.String()), role: Nullable(Type.String()) }),
  action: AuditActionSchema,
  resource: Type.Object({ type: Nullable(Type.String()), id: Nullable(Uuid), name: Nullable(Type.String()) }),
  category: AuditCategorySchema,
  result: StringEnum(['success', 'failure', 'denied'] as const),
  ipAddress: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  details: Type.Object({}, { additionalProperties: true }),
  orgId: Nullable(Uuid),
  seq: Nullable(Type.Integer({ description: 'Position in the chain; null while pending (sealed within a second)' })),
  actorType: StringEnum(['user', 'api_key', 'agent', 'system'] as const),
  actorId: Nullable(Uuid),
  actorEmail: Nullable(Type.String()),
  resourceType: Nullable(Type.String()),
  resourceId: Nullable(Uuid),
  resourceName: Nullable(Type.String()),
  errorMessage: Nullable(Type.String()),
  checksum: Nullable(Type.String()),
  prevChecksum: Nullable(Type.String()),
});

export const LogList = Paginated(LogEntry);

export const LegacyEntry = Type.Object({
  id: Uuid,
  timestamp: Type.String({ format: 'date-time' }),
  action: AuditActionSchema,
  resource: Type.String(),
  resourceType: Nullable(Type.String()),
  details: Type.String({ description: 'JSON text of the details object' }),
  ipAddress: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  sessionId: Type.Null(),
  user: Type.Object({ name: Nullable(Type.String()), email: Nullable(Type.String()), role: Nullable(Type.String()), department: Type.Null() }),
  changes: Type.Object({ before: Type.Object({}, { additionalProperties: true }), after: Type.Object({}, { additionalProperties: true }) }),
});

export const LegacyList = Type.Object({ entries: Type.Array(LegacyEntry), pagination: PaginationSchema });

export const VerifyQuery = Type.Object({
  orgId: Type.Optional(OrgIdFilter),
  fromSeq: Type.Optional(Type.Integer({ minimum: 1 })),
  toSeq: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const VerifyResult = Type.Object({
  valid: Type.Boolean(),
  checked: Type.Integer(),
  firstSeq: Nullable(Type.Integer()),
  lastSeq: Nullable(Type.Integer()),
  anchor: Nullable(Type.Object({ seq: Type.Integer(), checksum: Type.String() })),
  pending: Type.Integer(),
  brokenAt: Nullable(Type.Object({ seq: Type.Integer(), id: Nullable(Uuid), reason: Type.String() })),
});
export type VerifyResult = Static<typeof VerifyResult>;

export { IdParams };

/** API.md §5: the audit read routes take a JWT (the role's audit:read) or an API key with audit:read (SIEM pulls). */
export const AUDIT_READ = { auth: { via: ['jwt', 'api_key'], permission: 'audit:read' } } as const;
