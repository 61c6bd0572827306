// Request and response schemas of agent log submission and the device log queries (SPEC "Agent
// submissions", "Device log queries", API.md §4, §6).
import { Type } from 'typebox';
import { Paginated, PaginationQuery } from '../http/pagination.js';
import { AgentParams, IdParams, Nullable, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';

export { AgentParams, IdParams };

export const DIAGNOSTIC_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export const EVENT_LEVELS = ['info', 'warning', 'error', 'critical'] as const;
export const EVENT_CATEGORIES = ['security', 'hardware', 'application', 'system'] as const;

export const LIMITS = {
  /** SPEC "Limits": at most 500 diagnostic entries per request, inserted in batches of 100. */
  logsPerRequest: 500,
  /** API.md §6. */
  eventsPerRequest: 1000,
  insertBatch: 100,
  /** Our caps: a log line is not a document, and 500 of them must fit the 5 MiB agent body limit. */
  messageLength: 10_000,
  /** `fields` / `details`: nesting depth, JSON size in characters, and top-level keys. */
  jsonDepth: 8,
  jsonLength: 16_384,
  jsonKeys: 100,
  diagnosticPageMax: 1000,
  eventPageMax: 500,
  searchLength: 200,
} as const;

// RFC 3339 date-time with an explicit offset: `format` checks the calendar, the pattern keeps out the
// looser forms ("2024-01-02 03:04:05", "+0100") that JavaScript and PostgreSQL could read differently.
const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$';
const AgentTimestamp = (description: string) => Type.String({ format: 'date-time', pattern: TIMESTAMP_PATTERN, description });

const JsonObject = (description: string) =>
  Type.Object({}, { additionalProperties: true, maxProperties: LIMITS.jsonKeys, description });
const Message = Type.String({ maxLength: LIMITS.messageLength, description: `up to ${LIMITS.messageLength} characters` });

/** The agentId (64 hex); checked by agent authentication, which answers 404 for an unknown one. */

export const DiagnosticLogInput = Type.Object(
  {
    timestamp: AgentTimestamp('when the agent generated the entry (RFC 3339, with offset)'),
    level: StringEnum(DIAGNOSTIC_LEVELS),
    component: Type.String({ minLength: 1, maxLength: 100, description: 'subsystem, e.g. updater, heartbeat, ws' }),
    message: Message,
    fields: Type.Optional(Nullable(JsonObject(`structured metadata: at most ${LIMITS.jsonDepth} levels deep, ${LIMITS.jsonLength} characters as JSON`))),
    agentVersion: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  },
  { additionalProperties: false },
);

export const DiagnosticLogsBody = Type.Object(
  { logs: Type.Array(DiagnosticLogInput, { maxItems: LIMITS.logsPerRequest }) },
  { additionalProperties: false },
);

export const DiagnosticLogsReceived = Type.Object({ received: Type.Integer({ description: 'entries stored' }) });

export const EventLogInput = Type.Object(
  {
    timestamp: AgentTimestamp('when the event occurred on the device (RFC 3339, with offset)'),
    level: StringEnum(EVENT_LEVELS),
    category: StringEnum(EVENT_CATEGORIES),
    source: Type.String({ minLength: 1, maxLength: 255 }),
    eventId: Type.Optional(Nullable(Type.String({ maxLength: 100, description: 'OS event identifier; absent, null or empty: never a duplicate' }))),
    message: Message,
    details: Type.Optional(Nullable(JsonObject(`at most ${LIMITS.jsonDepth} levels deep, ${LIMITS.jsonLength} characters as JSON`))),
  },
  { additionalProperties: false },
);

export const EventLogsBody = Type.Object(
  { events: Type.Array(EventLogInput, { maxItems: LIMITS.eventsPerRequest }) },
  { additionalProperties: false },
);

export const EventLogsAccepted = Type.Object({
  success: Type.Literal(true),
  count: Type.Integer({ description: 'events stored; duplicates of stored events (same source and eventId) are not counted' }),
});

const levelList = DIAGNOSTIC_LEVELS.join('|');
const QueryTimestamp = (description: string) => Type.Optional(AgentTimestamp(description));

export const DiagnosticLogQuery = Type.Object({
  ...PaginationQuery,
  level: Type.Optional(Type.String({ pattern: `^\\s*(${levelList})\\s*(,\\s*(${levelList})\\s*)*$`, description: `comma-separated list of ${DIAGNOSTIC_LEVELS.join(', ')}` })),
  component: Type.Optional(Type.String({ maxLength: 100, description: 'exact component' })),
  since: QueryTimestamp('entries at or after this time'),
  until: QueryTimestamp('entries at or before this time'),
  search: Type.Optional(Type.String({ maxLength: LIMITS.searchLength, description: 'case-insensitive literal substring of the message' })),
});

export const EventLogQuery = Type.Object({
  ...PaginationQuery,
  category: Type.Optional(StringEnum(EVENT_CATEGORIES)),
  level: Type.Optional(StringEnum(EVENT_LEVELS)),
  source: Type.Optional(Type.String({ maxLength: 255, description: 'exact source' })),
  startDate: QueryTimestamp('events at or after this time'),
  endDate: QueryTimestamp('events at or before this time'),
});

const StoredJson = Nullable(Type.Object({}, { additionalProperties: true }));

export const DiagnosticLog = Type.Object({
  id: Uuid,
  deviceId: Uuid,
  orgId: Uuid,
  timestamp: Timestamp,
  level: StringEnum(DIAGNOSTIC_LEVELS),
  component: Type.String(),
  message: Type.String(),
  fields: StoredJson,
  agentVersion: Nullable(Type.String()),
  createdAt: Timestamp,
});

export const EventLog = Type.Object({
  id: Uuid,
  deviceId: Uuid,
  orgId: Uuid,
  timestamp: Timestamp,
  level: StringEnum(EVENT_LEVELS),
  category: StringEnum(EVENT_CATEGORIES),
  source: Type.String(),
  eventId: Nullable(Type.String()),
  message: Type.String(),
  details: StoredJson,
  createdAt: Timestamp,
});

export const DiagnosticLogList = Paginated(DiagnosticLog);
export const EventLogList = Paginated(EventLog);
