// Turns one WebSocket text frame from the service into the agent's reply (API.md §7). Pure: the
// caller sends the reply and logs the outcome. A frame that is not a command with an id cannot be
// answered, so it is ignored; a command with a bad payload or an unknown name is answered `failed`.
import { LIVE_COMMANDS, LIVE_LEVELS, MAX_FRAME_BYTES, type CommandResultMessage, type EventLogQuery, type LiveCommand, type LiveLevel } from '../live-queries/protocol.js';
import type { EventLogStore } from './event-log-store.js';

export const DEFAULT_QUERY_LIMIT = 50;
export const MAX_QUERY_LIMIT = 500;

export type CommandOutcome =
  | { kind: 'reply'; command: string; reply: CommandResultMessage }
  | { kind: 'ignored'; reason: string };

class InvalidPayload extends Error {}

export function handleCommandFrame(store: EventLogStore, frame: string): CommandOutcome {
  let message: unknown;
  try {
    message = JSON.parse(frame);
  } catch {
    return { kind: 'ignored', reason: 'not JSON' };
  }
  if (!isObject(message)) return { kind: 'ignored', reason: 'not a JSON object' };
  if (message.type !== 'command') return { kind: 'ignored', reason: `unexpected message type ${JSON.stringify(message.type)}` };
  if (typeof message.id !== 'string' || message.id.length === 0) return { kind: 'ignored', reason: 'command without an id' };
  const id = message.id;
  const command = typeof message.command === 'string' ? message.command : String(message.command);
  const failed = (error: string): CommandOutcome => ({ kind: 'reply', command, reply: { type: 'command_result', id, status: 'failed', error } });

  if (!(LIVE_COMMANDS as readonly string[]).includes(command)) return failed('unknown_command');
  const payload = message.payload ?? {};
  if (!isObject(payload)) return failed('invalid_payload');
  let result: unknown;
  try {
    result = run(store, command as LiveCommand, payload);
  } catch (err) {
    if (err instanceof InvalidPayload) return failed('invalid_payload');
    throw err;
  }
  if (result === null) return failed('not_found');
  return { kind: 'reply', command, reply: { type: 'command_result', id, status: 'completed', result } };
}

/** JSON text of a reply; a result that would exceed the service's frame limit becomes a failure. */
export function encodeReply(reply: CommandResultMessage): string {
  const text = JSON.stringify(reply);
  if (Buffer.byteLength(text) <= MAX_FRAME_BYTES) return text;
  return JSON.stringify({ type: 'command_result', id: reply.id, status: 'failed', error: 'result_too_large' } satisfies CommandResultMessage);
}

function run(store: EventLogStore, command: LiveCommand, payload: Record<string, unknown>): unknown {
  switch (command) {
    case 'eventlogs.list':
      return { logs: store.list() };
    case 'eventlogs.get':
      return store.get(logName(payload.name));
    case 'eventlogs.query':
      return store.query(parseQuery(payload));
    case 'eventlogs.record':
      return store.record(logName(payload.name), integer(payload.recordId, 0));
  }
}

function parseQuery(payload: Record<string, unknown>): EventLogQuery {
  const query: EventLogQuery = {
    name: logName(payload.name),
    page: payload.page === undefined ? 1 : integer(payload.page, 1),
    limit: payload.limit === undefined ? DEFAULT_QUERY_LIMIT : integer(payload.limit, 1),
  };
  if (query.limit > MAX_QUERY_LIMIT) throw new InvalidPayload();
  // null is treated like absent: a relay may serialise an unset filter either way.
  if (payload.level != null) {
    if (!(LIVE_LEVELS as readonly unknown[]).includes(payload.level)) throw new InvalidPayload();
    query.level = payload.level as LiveLevel;
  }
  if (payload.source != null) {
    if (typeof payload.source !== 'string') throw new InvalidPayload();
    query.source = payload.source;
  }
  if (payload.startTime != null) query.startTime = isoTime(payload.startTime);
  if (payload.endTime != null) query.endTime = isoTime(payload.endTime);
  if (payload.eventId != null) query.eventId = integer(payload.eventId, 0);
  return query;
}

function logName(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidPayload();
  return value;
}

/** A whole number ≥ min; digit strings are accepted, since query strings carry numbers as text. */
function integer(value: unknown, min: number): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min) throw new InvalidPayload();
  return n;
}

function isoTime(value: unknown): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(Date.parse(value))) throw new InvalidPayload();
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
