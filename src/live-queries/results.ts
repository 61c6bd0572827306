// Shape checks of agent replies (API.md §7) against the very schemas the routes answer with: a
// reply that does not fit them whole is 502 AGENT_BAD_REPLY, never passed on to the client
// half-formed (nor left to fail in the response serializer as a 500).
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { Nullable } from '../http/common-schemas.js';
import type { LiveCommand } from './protocol.js';
import { Descriptor, Entry } from './live-queries.schemas.js';

const REPLIES = {
  'eventlogs.list': Type.Object({ logs: Type.Array(Descriptor) }),
  'eventlogs.get': Descriptor,
  'eventlogs.query': Type.Object({ events: Type.Array(Entry), hasMore: Type.Boolean(), total: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))) }),
  'eventlogs.record': Entry,
} as const;

export function checkResult(command: LiveCommand, result: unknown): boolean {
  return Value.Check(REPLIES[command], result);
}
