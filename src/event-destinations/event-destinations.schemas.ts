// Request and response schemas of /event-destinations (API.md §9).
import { Type } from 'typebox';
import { PaginationQuery, Paginated } from '../http/pagination.js';
import { IdParams, Nullable, Success, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';

export { IdParams, Success };

export const RESULTS = ['success', 'failure', 'denied'] as const;

const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1-255 characters, not only spaces' });
const Kind = StringEnum(['webhook', 'syslog'] as const);
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https:// (webhook; http:// only with OUTBOUND_ALLOW_PRIVATE), syslog+tls://host:port or syslog+tcp://host:port' });
const ActionPattern = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^([a-z0-9_.]+\\*?|\\*)$',
  description: 'an exact action name, or a prefix ending in * (api_key.*; * alone: every action, as an empty list)',
});
const Filter = Type.Object(
  {
    actions: Type.Optional(Type.Array(ActionPattern, { maxItems: 100, description: 'empty: every action' })),
    results: Type.Optional(Type.Array(StringEnum(RESULTS), { maxItems: 3, description: 'empty: every result' })),
  },
  { additionalProperties: false },
);
const CaCertificate = Type.String({ minLength: 1, maxLength: 65536, description: 'PEM; trusted besides the system CAs (syslog+tls)' });

export const Destination = Type.Object({
  id: Uuid,
  name: Type.String(),
  kind: Kind,
  url: Type.String(),
  orgId: Nullable(Uuid),
  partnerId: Nullable(Uuid),
  filter: Type.Object({ actions: Type.Array(Type.String()), results: Type.Array(StringEnum(RESULTS)) }),
  enabled: Type.Boolean(),
  status: StringEnum(['active', 'failing', 'disabled'] as const),
  lastSuccessAt: Nullable(Timestamp),
  lastFailureAt: Nullable(Timestamp),
  lastError: Nullable(Type.String()),
  createdBy: Nullable(Uuid),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DestinationWithSecret = Type.Object({
  ...Destination.properties,
  secret: Type.Optional(Type.String({ description: 'webhooks only: the signing secret (whsec_…), shown only in this response' })),
});

export const DestinationList = Paginated(Destination);

export const DestinationListQuery = Type.Object({ ...PaginationQuery, orgId: Type.Optional(Uuid), partnerId: Type.Optional(Uuid) });

export const CreateDestinationBody = Type.Object(
  {
    name: Name,
    kind: Kind,
    url: Url,
    orgId: Type.Optional(Uuid),
    partnerId: Type.Optional(Uuid),
    filter: Type.Optional(Filter),
    caCertificate: Type.Optional(Nullable(CaCertificate)),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const UpdateDestinationBody = Type.Object(
  {
    name: Type.Optional(Name),
    url: Type.Optional(Url),
    filter: Type.Optional(Filter),
    caCertificate: Type.Optional(Nullable(CaCertificate)),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'kind, orgId and partnerId cannot be changed', 'x-fixed-fields': ['kind', 'orgId', 'partnerId'] },
);

export const ReplayBody = Type.Object(
  {
    orgId: Type.Optional(Nullable(Uuid)),
    fromSeq: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  },
  { additionalProperties: false },
);

export const Secret = Type.Object({ secret: Type.String({ description: 'the new signing secret, shown only in this response' }) });

export const TestResult = Type.Object({
  delivered: Type.Boolean(),
  responseStatus: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
});

export const Delivery = Type.Object({
  id: Uuid,
  entryId: Nullable(Uuid),
  orgId: Nullable(Uuid),
  seq: Nullable(Type.Integer()),
  action: Type.String(),
  attempt: Type.Integer(),
  outcome: StringEnum(['delivered', 'failed'] as const),
  responseStatus: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
  attemptedAt: Timestamp,
});

export const DeliveryList = Paginated(Delivery);
export const DeliveryListQuery = Type.Object(PaginationQuery);
