// Request and response schemas of /devices and the device's own /agents routes (enrolment,
// heartbeat), API.md §6.
import { Type } from 'typebox';
import { PaginationQuery, Paginated } from '../http/pagination.js';
import { AgentParams, IdParams, Nullable, SearchFilter, Success, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';

export { AgentParams, IdParams, Success };

const OsType = StringEnum(['windows', 'macos', 'linux'] as const);

export const EnrollBody = Type.Object(
  {
    enrollmentKey: Type.String({ minLength: 1, maxLength: 256 }),
    hostname: Type.String({ minLength: 1, maxLength: 255 }),
    osType: OsType,
    osVersion: Type.String({ minLength: 1, maxLength: 100 }),
    architecture: Type.String({ minLength: 1, maxLength: 50 }),
    agentVersion: Type.String({ minLength: 1, maxLength: 50 }),
    orgId: Type.Optional(Uuid),
    siteId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const Enrolled = Type.Object({
  agentId: Type.String({ description: '64 hex characters' }),
  deviceId: Uuid,
  authToken: Type.String({ description: 'the agent’s bearer token, shown only in this response' }),
  orgId: Uuid,
  siteId: Uuid,
});


export const HeartbeatBody = Nullable(
  Type.Object(
    {
      agentVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
      metrics: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 100 })),
    },
    { additionalProperties: false },
  ),
);

export const HeartbeatReply = Type.Object({ ok: Type.Literal(true), serverTime: Timestamp, heartbeatIntervalSeconds: Type.Integer() });

export const Device = Type.Object({
  id: Uuid,
  orgId: Uuid,
  siteId: Uuid,
  agentId: Type.String(),
  hostname: Type.String(),
  osType: OsType,
  osVersion: Type.String(),
  architecture: Type.String(),
  agentVersion: Type.String(),
  status: StringEnum(['online', 'offline'] as const),
  lastSeenAt: Nullable(Timestamp),
  lastSourceIp: Nullable(Type.String()),
  enrolledAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DeviceList = Paginated(Device);

export const DeviceListQuery = Type.Object({
  ...PaginationQuery,
  orgId: Type.Optional(Uuid),
  siteId: Type.Optional(Uuid),
  status: Type.Optional(StringEnum(['online', 'offline'] as const)),
  search: SearchFilter('hostname'),
});

export const UpdateDeviceBody = Type.Object({ siteId: Uuid }, { additionalProperties: false });
