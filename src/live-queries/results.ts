// Shape checks of agent replies (API.md §7): a reply that does not fit is 502 AGENT_BAD_REPLY,
// never passed on to the client half-formed.
import type { LiveCommand } from './protocol.js';
import { LIVE_LEVELS } from './protocol.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isDescriptor = (v: unknown) => isObject(v) && typeof v.name === 'string' && typeof v.recordCount === 'number';
const isEntry = (v: unknown) =>
  isObject(v) && typeof v.recordId === 'number' && typeof v.timeCreated === 'string' && typeof v.message === 'string' && (LIVE_LEVELS as readonly unknown[]).includes(v.level);

export function checkResult(command: LiveCommand, result: unknown): boolean {
  switch (command) {
    case 'eventlogs.list':
      return isObject(result) && Array.isArray(result.logs) && result.logs.every(isDescriptor);
    case 'eventlogs.get':
      return isDescriptor(result);
    case 'eventlogs.query':
      return isObject(result) && Array.isArray(result.events) && result.events.every(isEntry) && typeof result.hasMore === 'boolean'
        && (result.total === undefined || result.total === null || typeof result.total === 'number');
    case 'eventlogs.record':
      return isEntry(result);
  }
}
