// Request and response schemas of /enrollment-keys, /agents and /devices (SPEC "Enrollment key",
// API.md §5-6).
import { Type } from 'typebox';
import { PaginationQuery, Paginated } from '../http/pagination.js';
import { IdParams, Nullable, Success, Timestamp, Uuid } from '../http/common-schemas.js';

export { IdParams, Success };

const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1-255 characters, not only spaces' });
const MaxUsage = Type.Integer({ minimum: 1, maximum: 100_000 });
const FutureTime = Type.String({ format: 'date-time', description: 'ISO 8601, in the future' });

export const EnrollmentKey = Type.Object({
  id: Uuid,
  orgId: Uuid,
  siteId: Nullable(Uuid),
  name: Type.String(),
  usageCount: Type.Integer(),
  maxUsage: Nullable(Type.Integer({ description: 'null: unlimited' })),
  expiresAt: Timestamp,
  createdBy: Nullable(Uuid),
  createdAt: Timestamp,
  status: Type.Enum(['active', 'expired', 'exhausted'] as const, { description: 'derived: expired when expiresAt has passed, exhausted when usageCount has reached maxUsage' }),
});

export const EnrollmentKeyWithSecret = Type.Object({
  ...EnrollmentKey.properties,
  key: Type.String({ description: '64 hex characters, shown only in this response' }),
});

export const EnrollmentKeyList = Paginated(EnrollmentKey);

export const EnrollmentKeyListQuery = Type.Object({
  ...PaginationQuery,
  orgId: Type.Optional(Uuid),
  expired: Type.Optional(Type.Boolean({ description: 'true: only expired keys; false: only unexpired ones' })),
});

export const CreateEnrollmentKeyBody = Type.Object(
  {
    orgId: Type.Optional(Uuid),
    siteId: Type.Optional(Nullable(Uuid)),
    name: Name,
    maxUsage: Type.Optional(MaxUsage),
    expiresAt: Type.Optional(FutureTime),
  },
  { additionalProperties: false, description: 'orgId is inferred for organization scope and required otherwise' },
);

export const RotateEnrollmentKeyBody = Type.Union([
  Type.Object({ maxUsage: Type.Optional(Nullable(MaxUsage)), expiresAt: Type.Optional(FutureTime) }, { additionalProperties: false }),
  Type.Null(),
]);

const OsType = Type.Enum(['windows', 'macos', 'linux'] as const);

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

export const AgentParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, description: 'the agentId' }) });

export const HeartbeatBody = Type.Union([
  Type.Object(
    {
      agentVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
      metrics: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 100 })),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

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
  status: Type.Enum(['online', 'offline'] as const),
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
  status: Type.Optional(Type.Enum(['online', 'offline'] as const)),
});

export const UpdateDeviceBody = Type.Object({ siteId: Uuid }, { additionalProperties: false });
