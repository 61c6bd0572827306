// How a live query ended, as metrics count it: apart from the gateway and the relay, which both
// classify their calls and one of which calls the other.
import { AppError } from '../errors.js';

/** API.md §2 codes, lower-cased; a bounded set. */
export type LiveOutcome = 'ok' | 'device_offline' | 'agent_error' | 'agent_bad_reply' | 'agent_timeout' | 'not_found' | 'other';
const FAILURE_OUTCOMES = new Set<string>(['device_offline', 'agent_error', 'agent_bad_reply', 'agent_timeout', 'not_found']);

export function liveOutcome(err: unknown): LiveOutcome {
  const code = err instanceof AppError ? err.code.toLowerCase() : '';
  return FAILURE_OUTCOMES.has(code) ? (code as LiveOutcome) : 'other';
}
