// SQL for diagnostic logs and device event logs. Inserts take one batch as column arrays and
// unnest them: one statement and one round trip per batch, no per-row parameters (DESIGN.md §6).
import type { Queryable } from '../db/database.js';
import { queryPage } from '../db/pages.js';

export interface DiagnosticLogRow {
  id: string;
  device_id: string;
  org_id: string;
  timestamp: Date;
  level: string;
  component: string;
  message: string;
  fields: Record<string, unknown> | null;
  agent_version: string | null;
  created_at: Date;
}

export interface EventLogRow {
  id: string;
  device_id: string;
  org_id: string;
  timestamp: Date;
  level: string;
  category: string;
  source: string;
  event_id: string | null;
  message: string;
  details: Record<string, unknown> | null;
  created_at: Date;
}

/** One batch, column by column; timestamps as ISO text, JSON as text (null for none). */
export interface DiagnosticLogBatch {
  timestamp: string[];
  level: string[];
  component: string[];
  message: string[];
  fields: (string | null)[];
  agentVersion: (string | null)[];
}

export interface EventLogBatch {
  timestamp: string[];
  level: string[];
  category: string[];
  source: string[];
  eventId: (string | null)[];
  message: string[];
  details: (string | null)[];
}

export interface Device {
  deviceId: string;
  orgId: string;
}

export async function insertDiagnosticLogs(tx: Queryable, device: Device, batch: DiagnosticLogBatch): Promise<number> {
  const { rowCount } = await tx.query(
    `insert into diagnostic_logs (device_id, org_id, timestamp, level, component, message, fields, agent_version)
     select $1, $2, u.ts, u.level, u.component, u.message, u.fields, u.agent_version
     from unnest($3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[]) as u(ts, level, component, message, fields, agent_version)`,
    [device.deviceId, device.orgId, batch.timestamp, batch.level, batch.component, batch.message, batch.fields, batch.agentVersion],
  );
  return rowCount;
}

/** Returns how many were stored: rows colliding on (device, source, eventId) are skipped. */
export async function insertEventLogs(tx: Queryable, device: Device, batch: EventLogBatch): Promise<number> {
  const { rowCount } = await tx.query(
    `insert into device_event_logs (device_id, org_id, timestamp, level, category, source, event_id, message, details)
     select $1, $2, u.ts, u.level, u.category, u.source, u.event_id, u.message, u.details
     from unnest($3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::jsonb[])
       as u(ts, level, category, source, event_id, message, details)
     on conflict (device_id, source, event_id) where event_id is not null do nothing`,
    [device.deviceId, device.orgId, batch.timestamp, batch.level, batch.category, batch.source, batch.eventId, batch.message, batch.details],
  );
  return rowCount;
}

/** Builds `where` conditions with numbered parameters. */
class Conditions {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];
  add(sql: (param: string) => string, value: unknown): void {
    this.params.push(value);
    this.clauses.push(sql(`$${this.params.length}`));
  }
  get where(): string {
    return this.clauses.join(' and ');
  }
}

export interface DiagnosticLogFilter {
  deviceId: string;
  levels?: string[];
  component?: string;
  /** ISO timestamps, inclusive. */
  since?: string;
  until?: string;
  /** A LIKE pattern, already escaped. */
  messagePattern?: string;
}

export interface EventLogFilter {
  deviceId: string;
  category?: string;
  level?: string;
  source?: string;
  /** ISO timestamps, inclusive. */
  since?: string;
  until?: string;
}

/** A page and its total in one statement; `valueDependentPlan` for a free-text search, whose best plan depends on the pattern. */
function listPage<R extends object>(tx: Queryable, table: string, columns: string, c: Conditions, limit: number, offset: number, withTotal: boolean, valueDependentPlan = false) {
  return queryPage<R>(tx, {
    rows: `select ${columns} from ${table} where ${c.where} order by timestamp desc, id desc limit $${c.params.length + 1} offset $${c.params.length + 2}`,
    count: withTotal ? `select count(*)::int from ${table} where ${c.where}` : null,
    params: [...c.params, limit, offset],
    ...(valueDependentPlan ? { options: { prepare: false } } : {}),
  });
}

const DIAGNOSTIC_COLUMNS = 'id, device_id, org_id, timestamp, level, component, message, fields, agent_version, created_at';
const EVENT_COLUMNS = 'id, device_id, org_id, timestamp, level, category, source, event_id, message, details, created_at';

export function listDiagnosticLogs(tx: Queryable, filter: DiagnosticLogFilter, limit: number, offset: number, withTotal: boolean) {
  const c = new Conditions();
  c.add((p) => `device_id = ${p}`, filter.deviceId);
  if (filter.levels) c.add((p) => `level = any(${p}::text[])`, filter.levels);
  if (filter.component !== undefined) c.add((p) => `component = ${p}`, filter.component);
  if (filter.since) c.add((p) => `timestamp >= ${p}::timestamptz`, filter.since);
  if (filter.until) c.add((p) => `timestamp <= ${p}::timestamptz`, filter.until);
  if (filter.messagePattern !== undefined) c.add((p) => `message ilike ${p}`, filter.messagePattern);
  return listPage<DiagnosticLogRow>(tx, 'diagnostic_logs', DIAGNOSTIC_COLUMNS, c, limit, offset, withTotal, filter.messagePattern !== undefined);
}

export function listEventLogs(tx: Queryable, filter: EventLogFilter, limit: number, offset: number, withTotal: boolean) {
  const c = new Conditions();
  c.add((p) => `device_id = ${p}`, filter.deviceId);
  if (filter.category) c.add((p) => `category = ${p}`, filter.category);
  if (filter.level) c.add((p) => `level = ${p}`, filter.level);
  if (filter.source !== undefined) c.add((p) => `source = ${p}`, filter.source);
  if (filter.since) c.add((p) => `timestamp >= ${p}::timestamptz`, filter.since);
  if (filter.until) c.add((p) => `timestamp <= ${p}::timestamptz`, filter.until);
  return listPage<EventLogRow>(tx, 'device_event_logs', EVENT_COLUMNS, c, limit, offset, withTotal);
}
