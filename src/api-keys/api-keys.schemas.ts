// Request and response schemas of /api-keys (SPEC "API key", API.md §5).
import { Type } from 'typebox';
import { PaginationQuery, Paginated } from '../http/pagination.js';
import { IdParams, Nullable, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';

export { IdParams };

/** API.md §5: the scope strings a key may hold. */
export const API_KEY_SCOPES = ['devices:read', 'devices:write', 'devices:execute', 'audit:read', 'audit:export', '*'] as const;

const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1-255 characters, not only spaces' });
const Scopes = Type.Array(StringEnum(API_KEY_SCOPES), { maxItems: API_KEY_SCOPES.length * 4, description: `any of ${API_KEY_SCOPES.join(', ')}; * satisfies every scope` });
const RateLimit = Type.Integer({ minimum: 1, maximum: 100_000, description: 'requests per sliding hour' });
const Status = StringEnum(['active', 'expired', 'revoked'] as const);

export const ApiKey = Type.Object({
  id: Uuid,
  orgId: Uuid,
  name: Type.String(),
  keyPrefix: Type.String({ description: 'the first 12 characters of the key' }),
  scopes: Type.Array(Type.String()),
  expiresAt: Nullable(Timestamp),
  rateLimit: Type.Integer(),
  status: Status,
  createdBy: Nullable(Uuid),
  createdAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
  usageCount: Type.Integer(),
});

export const ApiKeyWithSecret = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'the full key, shown only in this response' }),
  warning: Type.String(),
});

export const ApiKeyList = Paginated(ApiKey);

export const ApiKeyListQuery = Type.Object({ ...PaginationQuery, orgId: Type.Optional(Uuid), status: Type.Optional(Status) });

export const CreateApiKeyBody = Type.Object(
  {
    orgId: Uuid,
    name: Name,
    scopes: Type.Optional(Scopes),
    expiresAt: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'ISO 8601, in the future; null: never expires' }))),
    rateLimit: Type.Optional(RateLimit),
  },
  { additionalProperties: false },
);

export const UpdateApiKeyBody = Type.Object(
  { name: Type.Optional(Name), scopes: Type.Optional(Scopes), rateLimit: Type.Optional(RateLimit) },
  { additionalProperties: false, description: 'orgId and expiresAt cannot be changed', 'x-fixed-fields': ['orgId', 'expiresAt'] },
);

/** The calling key, as GET /auth/api-key shows it. */
export const CurrentApiKey = Type.Object({
  id: Uuid,
  orgId: Uuid,
  name: Type.String(),
  scopes: Type.Array(Type.String()),
});
