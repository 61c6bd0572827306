// Agent diagnostic logs and device event logs: submission by the agent (all or nothing, in
// batches of 100 inside one transaction), event dedupe, and the paginated device queries.
import type { Static } from 'typebox';
import type { Database, Queryable } from '../db/database.js';
import { substringPattern } from '../db/like.js';
import { readTenant, withTenant } from '../db/tenant-scope.js';
import { invalidRequest } from '../errors.js';
import type { AgentCaller, Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import type { RecordAudit } from '../audit/recorder.js';
import * as repo from './agent-logs.repo.js';
import {
  LIMITS,
  type DiagnosticLog,
  type DiagnosticLogInput,
  type DiagnosticLogQuery,
  type EventLog,
  type EventLogInput,
  type EventLogQuery,
} from './agent-logs.schemas.js';

export type DiagnosticLogView = Static<typeof DiagnosticLog>;
export type EventLogView = Static<typeof EventLog>;
type DiagnosticLogEntry = Static<typeof DiagnosticLogInput>;
type EventLogEntry = Static<typeof EventLogInput>;

// What PostgreSQL's timestamptz and JavaScript's Date both hold: years 0001-9999 (UTC).
const MIN_TIME = -62_135_596_800_000;
const MAX_TIME = 253_402_300_799_999;
const CANONICAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const invalid = (path: string, message: string) => invalidRequest([{ path, message }]);

/** Schema-checked RFC 3339 text → canonical ISO (UTC, milliseconds), so both databases read it alike. */
function canonicalTime(value: string, path: string): string {
  // Fast path: what agents usually send (toISOString form) is already canonical; the schema checked the calendar.
  if (CANONICAL_TIME.test(value) && !value.startsWith('0000')) return value;
  const ms = Date.parse(value.toUpperCase());
  if (!(ms >= MIN_TIME && ms <= MAX_TIME)) throw invalid(path, 'must be a date-time between the years 0001 and 9999 (UTC)');
  return new Date(ms).toISOString();
}

/**
 * Refuses nesting deeper than the cap before anything recursive (JSON.stringify) touches it. The
 * text needs no cleaning here: the agent routes' body parser has already made every string and key
 * storable (NUL and lone surrogates to U+FFFD, http/validation.ts).
 */
function assertDepth(value: unknown, depth: number, path: string): void {
  if (value === null || typeof value !== 'object') return;
  if (depth > LIMITS.jsonDepth) throw invalid(path, `must be nested at most ${LIMITS.jsonDepth} levels deep`);
  for (const child of Object.values(value)) assertDepth(child, depth + 1, path);
}

/** JSON text for a jsonb column, or null when absent. */
function jsonText(value: object | null | undefined, path: string): string | null {
  if (value === null || value === undefined) return null;
  assertDepth(value, 1, path);
  const text = JSON.stringify(value);
  if (text.length > LIMITS.jsonLength) throw invalid(path, `must be at most ${LIMITS.jsonLength} characters as JSON`);
  return text;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Validates and converts every entry before the first insert: a bad entry stores nothing. */
function diagnosticBatches(logs: readonly DiagnosticLogEntry[]): repo.DiagnosticLogBatch[] {
  return chunks(logs.map((entry, i) => [entry, i] as const), LIMITS.insertBatch).map((part) => {
    const batch: repo.DiagnosticLogBatch = { timestamp: [], level: [], component: [], message: [], fields: [], agentVersion: [] };
    for (const [entry, i] of part) {
      batch.timestamp.push(canonicalTime(entry.timestamp, `body.logs.${i}.timestamp`));
      batch.level.push(entry.level);
      batch.component.push(entry.component);
      batch.message.push(entry.message);
      batch.fields.push(jsonText(entry.fields, `body.logs.${i}.fields`));
      batch.agentVersion.push(entry.agentVersion ?? null);
    }
    return batch;
  });
}

interface PreparedEvent {
  timestamp: string;
  level: string;
  category: string;
  source: string;
  eventId: string | null;
  message: string;
  details: string | null;
}

/**
 * Events ordered by (source, eventId), stably. Concurrent submissions of one device then take the
 * dedupe index's row locks in the same order, so ON CONFLICT waits can never form a deadlock
 * cycle; the first of several duplicates in a request is the one kept.
 */
function eventBatches(events: readonly EventLogEntry[]): repo.EventLogBatch[] {
  const prepared: PreparedEvent[] = events.map((e, i) => ({
    timestamp: canonicalTime(e.timestamp, `body.events.${i}.timestamp`),
    level: e.level,
    category: e.category,
    source: e.source,
    // An empty eventId identifies nothing: stored as none, so it is never a duplicate.
    eventId: e.eventId || null,
    message: e.message,
    details: jsonText(e.details, `body.events.${i}.details`),
  }));
  prepared.sort((a, b) =>
    a.source < b.source ? -1 : a.source > b.source ? 1 : (a.eventId ?? '') < (b.eventId ?? '') ? -1 : (a.eventId ?? '') > (b.eventId ?? '') ? 1 : 0,
  );
  return chunks(prepared, LIMITS.insertBatch).map((part) => ({
    timestamp: part.map((e) => e.timestamp),
    level: part.map((e) => e.level),
    category: part.map((e) => e.category),
    source: part.map((e) => e.source),
    eventId: part.map((e) => e.eventId),
    message: part.map((e) => e.message),
    details: part.map((e) => e.details),
  }));
}

function diagnosticLogView(row: repo.DiagnosticLogRow): DiagnosticLogView {
  return {
    id: row.id,
    deviceId: row.device_id,
    orgId: row.org_id,
    timestamp: row.timestamp.toISOString(),
    level: row.level as DiagnosticLogView['level'],
    component: row.component,
    message: row.message,
    fields: row.fields,
    agentVersion: row.agent_version,
    createdAt: row.created_at.toISOString(),
  };
}

function eventLogView(row: repo.EventLogRow): EventLogView {
  return {
    id: row.id,
    deviceId: row.device_id,
    orgId: row.org_id,
    timestamp: row.timestamp.toISOString(),
    level: row.level as EventLogView['level'],
    category: row.category as EventLogView['category'],
    source: row.source,
    eventId: row.event_id,
    message: row.message,
    details: row.details,
    createdAt: row.created_at.toISOString(),
  };
}

const optionalTime = (value: string | undefined, path: string) => (value === undefined ? undefined : canonicalTime(value, path));

export function createAgentLogsService(deps: {
  db: Database;
  recordAudit: RecordAudit;
  now: () => number;
  /** The devices module's reach rule: a device out of reach is 404. */
  deviceInReach(tx: Queryable, caller: Caller, id: string): Promise<{ id: string; orgId: string }>;
}) {
  const { db, recordAudit } = deps;
  const target = (agent: AgentCaller): repo.Device => ({ deviceId: agent.deviceId, orgId: agent.orgId });

  return {
    /** POST /agents/:id/logs: every entry or none. */
    async submitDiagnosticLogs(agent: AgentCaller, logs: readonly DiagnosticLogEntry[]): Promise<{ received: number }> {
      // Nothing to store is not an error (as for event logs): an agent may flush an empty buffer.
      if (logs.length === 0) return { received: 0 };
      const batches = diagnosticBatches(logs);
      const received = await withTenant(db, agent.tenant, async (tx) => {
        let stored = 0;
        for (const batch of batches) stored += await repo.insertDiagnosticLogs(tx, target(agent), batch);
        return stored;
      });
      return { received };
    },

    /** PUT /agents/:id/eventlogs: duplicates (same device, source and eventId) are skipped, not counted. */
    async submitEventLogs(agent: AgentCaller, events: readonly EventLogEntry[], meta: RequestMeta): Promise<{ success: true; count: number }> {
      if (events.length === 0) return { success: true, count: 0 };
      const batches = eventBatches(events);
      const count = await withTenant(db, agent.tenant, async (tx) => {
        let inserted = 0;
        for (const batch of batches) inserted += await repo.insertEventLogs(tx, target(agent), batch);
        await recordAudit(tx, {
          orgId: agent.orgId,
          actor: { type: 'agent', id: agent.agentId },
          action: 'agent.eventlogs.submit',
          resource: { type: 'device', id: agent.deviceId, name: agent.hostname },
          details: { submitted: events.length, inserted, duplicates: events.length - inserted },
          ip: meta.ip,
          userAgent: meta.userAgent,
        });
        return inserted;
      });
      return { success: true, count };
    },

    async listDiagnosticLogs(caller: Caller, deviceId: string, query: Static<typeof DiagnosticLogQuery>): Promise<PaginatedResult<DiagnosticLogView>> {
      const page = pageOf(query, LIMITS.diagnosticPageMax);
      const filter: repo.DiagnosticLogFilter = {
        deviceId,
        levels: query.level === undefined ? undefined : [...new Set(query.level.split(',').map((l) => l.trim()))],
        component: query.component,
        since: optionalTime(query.since, 'query.since'),
        until: optionalTime(query.until, 'query.until'),
        messagePattern: query.search === undefined ? undefined : substringPattern(query.search),
      };
      const { rows, total } = await readTenant(db, caller.tenant, async (tx) => {
        await deps.deviceInReach(tx, caller, deviceId);
        return repo.listDiagnosticLogs(tx, filter, page.limit, page.offset, !query.skipCount);
      });
      return paginated(rows.map(diagnosticLogView), page, total);
    },

    async listEventLogs(caller: Caller, deviceId: string, query: Static<typeof EventLogQuery>): Promise<PaginatedResult<EventLogView>> {
      const page = pageOf(query, LIMITS.eventPageMax);
      const filter: repo.EventLogFilter = {
        deviceId,
        category: query.category,
        level: query.level,
        source: query.source,
        since: optionalTime(query.startDate, 'query.startDate'),
        until: optionalTime(query.endDate, 'query.endDate'),
      };
      const { rows, total } = await readTenant(db, caller.tenant, async (tx) => {
        await deps.deviceInReach(tx, caller, deviceId);
        return repo.listEventLogs(tx, filter, page.limit, page.offset, !query.skipCount);
      });
      return paginated(rows.map(eventLogView), page, total);
    },
  };
}

export type AgentLogsService = ReturnType<typeof createAgentLogsService>;
