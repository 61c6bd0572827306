// Schemas of the live event-log routes (SPEC "Live event log descriptor/entry", API.md §7).
import { Type } from 'typebox';
import { Nullable, Uuid, StringEnum } from '../http/common-schemas.js';
import { ClampedInteger } from '../http/pagination.js';
import { LIVE_LEVELS } from './protocol.js';

export const Descriptor = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  recordCount: Type.Number(),
  maxSize: Type.Number({ description: 'bytes' }),
  retentionDays: Type.Number(),
  lastWriteTime: Type.String(),
});

export const Entry = Type.Object({
  recordId: Type.Number(),
  timeCreated: Type.String(),
  level: StringEnum(LIVE_LEVELS),
  source: Type.String(),
  eventId: Type.Number(),
  message: Type.String(),
  category: Type.String(),
  user: Nullable(Type.String()),
  computer: Type.String(),
  rawXml: Type.Optional(Type.String()),
});

export const DeviceParams = Type.Object({ deviceId: Uuid });
export const LogParams = Type.Object({ deviceId: Uuid, name: Type.String({ minLength: 1, maxLength: 256 }) });
export const RecordParams = Type.Object({ deviceId: Uuid, name: Type.String({ minLength: 1, maxLength: 256 }), recordId: Type.Integer({ minimum: 0 }) });

export const EventsQuery = Type.Object({
  page: Type.Optional(ClampedInteger('from 1; smaller values count as 1')),
  limit: Type.Optional(ClampedInteger('default 50, clamped into 1..500')),
  level: Type.Optional(StringEnum(LIVE_LEVELS)),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  startTime: Type.Optional(Type.String({ format: 'date-time' })),
  endTime: Type.Optional(Type.String({ format: 'date-time' })),
  eventId: Type.Optional(Type.Integer({ minimum: 0, description: 'a number' })),
});

export const DescriptorList = Type.Object({ data: Type.Array(Descriptor) });
export const OneDescriptor = Type.Object({ data: Descriptor });
export const OneEntry = Type.Object({ data: Entry });
export const EntryPage = Type.Object({
  data: Type.Array(Entry),
  pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Nullable(Type.Integer()), hasMore: Type.Boolean() }),
});
