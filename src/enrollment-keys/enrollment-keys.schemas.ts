// Request and response schemas of /enrollment-keys (SPEC "Enrollment key", API.md §5).
import { Type } from 'typebox';
import { PaginationQuery, Paginated } from '../http/pagination.js';
import { IdParams, Nullable, Success, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';

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
  status: StringEnum(['active', 'expired', 'exhausted'] as const, { description: 'derived: expired when expiresAt has passed, exhausted when usageCount has reached maxUsage' }),
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

export const RotateEnrollmentKeyBody = Nullable(
  Type.Object({ maxUsage: Type.Optional(Nullable(MaxUsage)), expiresAt: Type.Optional(FutureTime) }, { additionalProperties: false }),
);
