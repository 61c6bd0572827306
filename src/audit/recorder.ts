// recordAudit: every module writes its audit entry through this, in the transaction of the change
// it records (API.md §8), so there is no change without its entry and no entry without its change.
import { randomUUID } from 'node:crypto';
import { NIL_UUID } from '../db/columns.js';
import type { Transaction } from '../db/database.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import type { AuditAction } from './actions.js';
import { insertAuditRow } from './audit.repo.js';

export type { AuditAction };

export type ActorType = 'user' | 'api_key' | 'agent' | 'system';
export type AuditResult = 'success' | 'failure' | 'denied';

export interface AuditActor {
  type: ActorType;
  /** A UUID, or any other identifier (kept in details.rawActorId), or null. */
  id: string | null;
  email?: string | null;
}

export interface AuditEvent {
  /** The organization whose chain records the event; null for the platform chain. */
  orgId: string | null;
  actor: AuditActor;
  action: AuditAction;
  resource?: { type: string; id?: string | null; name?: string | null };
  details?: Record<string, unknown>;
  ip?: string | null;
  userAgent?: string | null;
  result?: AuditResult;
  errorMessage?: string | null;
}

export type RecordAudit = (tx: Transaction, event: AuditEvent) => Promise<void>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_DEPTH = 20;

export function actorOf(caller: Caller): AuditActor {
  return { type: caller.kind === 'api_key' ? 'api_key' : 'user', id: caller.id, email: caller.email };
}

/** An event a caller caused through a request: the actor, IP and user agent come from them. */
export function callerEvent(
  caller: Caller,
  meta: RequestMeta,
  event: { orgId: string | null; action: AuditAction; resource: { type: string; id: string; name: string | null }; details: Record<string, unknown>; result?: AuditResult; errorMessage?: string | null },
): AuditEvent {
  return { ...event, actor: actorOf(caller), ip: meta.ip, userAgent: meta.userAgent };
}

/**
 * The details of an update: which fields changed and their values before and after. Fields in
 * `hidden` (secrets such as a password) are named as changed but their values never recorded.
 */
export function changeDetails(changedFields: string[], before: object, after: object, hidden: readonly string[] = []) {
  const shown = changedFields.filter((f) => !hidden.includes(f));
  const pick = (values: object) => Object.fromEntries(shown.map((f) => [f, (values as Record<string, unknown>)[f]]));
  return { changedFields, before: pick(before), after: pick(after) };
}

/** Text PostgreSQL can store and JSON can carry: no NUL, no lone surrogates. */
function cleanText(value: string): string {
  return value.replace(/\u0000/g, '\uFFFD').toWellFormed();
}

function clip(value: string | null | undefined, max: number): string | null {
  return value === null || value === undefined ? null : cleanText(value).slice(0, max);
}

/** Details as they will read back from jsonb: plain JSON, finite numbers, clean strings. */
function cleanDetails(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return '[truncated]';
  if (typeof value === 'string') return cleanText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value === null || typeof value === 'boolean') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : cleanDetails(v, depth + 1)));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v !== undefined && typeof v !== 'function') out[cleanText(k)] = cleanDetails(v, depth + 1);
    }
    return out;
  }
  return null;
}

function splitId(id: string | null | undefined): { uuid: string | null; raw: string | null } {
  if (id === null || id === undefined) return { uuid: null, raw: null };
  return UUID.test(id) ? { uuid: id.toLowerCase(), raw: null } : { uuid: NIL_UUID, raw: cleanText(id).slice(0, 255) };
}

export function createAuditRecorder(deps: { now: () => number; onRecorded: () => void }): RecordAudit {
  return async (tx, event) => {
    const details = cleanDetails(event.details ?? {}) as Record<string, unknown>;
    const actor = splitId(event.actor.id);
    const resource = splitId(event.resource?.id);
    if (actor.raw !== null) details.rawActorId = actor.raw;
    if (resource.raw !== null) details.rawResourceId = resource.raw;
    insertAuditRow(tx, {
      id: randomUUID(),
      org_id: event.orgId,
      timestamp: new Date(deps.now()),
      actor_type: event.actor.type,
      actor_id: actor.uuid,
      actor_email: clip(event.actor.email, 255),
      action: cleanText(event.action).slice(0, 100),
      resource_type: clip(event.resource?.type, 50),
      resource_id: resource.uuid,
      resource_name: clip(event.resource?.name, 255),
      details,
      ip_address: clip(event.ip, 45),
      user_agent: clip(event.userAgent, 1000),
      result: event.result ?? 'success',
      error_message: clip(event.errorMessage, 2000),
    });
    tx.afterCommit(deps.onRecorded);
  };
}
