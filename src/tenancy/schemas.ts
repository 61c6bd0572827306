// Request and response schemas of /orgs/partners (SPEC "Partner", "Partner settings").
import { Type } from 'typebox';
import { PaginationQuery, Paginated } from '../http/pagination.js';
import { IdParams, Nullable, SearchFilter, Success, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';
import { SsoConfigInput, SsoConfigView } from '../identity/sso/sso.schemas.js';

export { IdParams, Success };

const Json = Type.Object({}, { additionalProperties: true });

export const Slug = Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', description: 'lowercase letters and digits in dash-separated words' });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const PartnerType = StringEnum(['msp', 'enterprise', 'internal'] as const);
const Plan = StringEnum(['free', 'starter', 'community', 'pro', 'enterprise', 'unlimited'] as const);
const PartnerStatus = StringEnum(['pending', 'active', 'suspended', 'churned'] as const);
const Cap = Nullable(Type.Integer({ minimum: 0, maximum: 10_000_000 }));
const Email = Type.String({ format: 'email', maxLength: 255 });
const Time = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour' });
const Day = Type.Object({ start: Type.Optional(Time), end: Type.Optional(Time), closed: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** Partner settings as a client may write them (merged key by key into the stored ones). */
export const PartnerSettingsInput = Type.Object(
  {
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA timezone name' })),
    dateFormat: Type.Optional(StringEnum(['MM/DD/YYYY', 'DD/MM/YYYY', 'YYYY-MM-DD'] as const)),
    timeFormat: Type.Optional(StringEnum(['12h', '24h'] as const)),
    language: Type.Optional(StringEnum(['en'] as const)),
    businessHours: Type.Optional(
      Type.Object(
        {
          preset: Type.Optional(StringEnum(['24/7', 'business', 'extended', 'custom'] as const)),
          custom: Type.Optional(Type.Object(Object.fromEntries(DAYS.map((d) => [d, Type.Optional(Day)])), { additionalProperties: false })),
        },
        { additionalProperties: false },
      ),
    ),
    contact: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ maxLength: 255 })),
          email: Type.Optional(Type.String({ maxLength: 255 })),
          phone: Type.Optional(Type.String({ maxLength: 64 })),
          website: Type.Optional(Type.String({ maxLength: 2048 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'organizationOrder is written by PATCH /orgs/organizations/order only' },
);

export const Partner = Type.Object({
  id: Uuid,
  name: Type.String(),
  slug: Type.String(),
  type: PartnerType,
  plan: Plan,
  status: PartnerStatus,
  maxOrganizations: Nullable(Type.Integer()),
  maxDevices: Nullable(Type.Integer()),
  settings: Json,
  ssoConfig: Nullable(SsoConfigView),
  billingEmail: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Nullable(Timestamp),
});

const partnerFields = {
  type: Type.Optional(PartnerType),
  plan: Type.Optional(Plan),
  status: Type.Optional(PartnerStatus),
  maxOrganizations: Type.Optional(Cap),
  maxDevices: Type.Optional(Cap),
  billingEmail: Type.Optional(Nullable(Email)),
  settings: Type.Optional(PartnerSettingsInput),
  ssoConfig: Type.Optional(Nullable(SsoConfigInput)),
};

export const CreatePartnerBody = Type.Object({ name: Name, slug: Slug, ...partnerFields }, { additionalProperties: false });
export const UpdatePartnerBody = Type.Object({ name: Type.Optional(Name), slug: Type.Optional(Slug), ...partnerFields }, { additionalProperties: false });
export const UpdateMyPartnerBody = Type.Object(
  {
    name: Type.Optional(Name),
    billingEmail: Type.Optional(Nullable(Email)),
    settings: Type.Optional(PartnerSettingsInput),
    ssoConfig: Type.Optional(Nullable(SsoConfigInput)),
  },
  { additionalProperties: false },
);
export const PartnerList = Paginated(Partner);
export const ListQuery = Type.Object({ ...PaginationQuery });

// --- organizations ------------------------------------------------------------------------------

const OrgType = StringEnum(['customer', 'internal'] as const);
const OrgStatus = StringEnum(['active', 'suspended', 'trial', 'churned'] as const);

export const Organization = Type.Object({
  id: Uuid,
  partnerId: Uuid,
  name: Type.String(),
  slug: Type.String(),
  type: OrgType,
  status: OrgStatus,
  maxDevices: Nullable(Type.Integer()),
  settings: Json,
  ssoConfig: Nullable(SsoConfigView),
  contractStart: Nullable(Timestamp),
  contractEnd: Nullable(Timestamp),
  billingContact: Nullable(Json),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Nullable(Timestamp),
});

const organizationFields = {
  type: Type.Optional(OrgType),
  status: Type.Optional(OrgStatus),
  maxDevices: Type.Optional(Cap),
  contractStart: Type.Optional(Nullable(Timestamp)),
  contractEnd: Type.Optional(Nullable(Timestamp)),
  settings: Type.Optional(Json),
  ssoConfig: Type.Optional(Nullable(SsoConfigInput)),
  billingContact: Type.Optional(Nullable(Json)),
};

export const CreateOrganizationBody = Type.Object(
  {
    partnerId: Type.Optional(Nullable(Uuid, { description: 'Required for system scope; partner scope may omit it (or give null, or its own)' })),
    name: Name,
    slug: Slug,
    ...organizationFields,
  },
  { additionalProperties: false },
);
export const UpdateOrganizationBody = Type.Object(
  { name: Type.Optional(Name), slug: Type.Optional(Slug), ...organizationFields },
  { additionalProperties: false, description: 'partnerId cannot be changed', 'x-fixed-fields': ['partnerId'] },
);
export const OrganizationList = Paginated(Organization);
export const AccessibleOrganizations = Type.Object({ data: Type.Array(Organization) });
export const OrganizationListQuery = Type.Object({ ...PaginationQuery, partnerId: Type.Optional(Uuid), search: SearchFilter('name') });
export const OrganizationOrder = Type.Object({ organizationOrder: Type.Array(Uuid, { maxItems: 10_000 }) }, { additionalProperties: false });
export const OrganizationOrderBody = Type.Object({
  organizationOrder: Type.Array(Uuid, { maxItems: 10_000 }),
  partnerId: Type.Optional(Type.String({
    format: 'uuid',
    description: 'The partner whose organizations are ordered: required for a system-scope caller; a partner-scope caller may name only its own partner',
  })),
}, { additionalProperties: false });

// --- sites --------------------------------------------------------------------------------------

const Timezone = Type.String({ minLength: 1, maxLength: 50, description: 'IANA timezone name' });

export const Site = Type.Object({
  id: Uuid,
  orgId: Uuid,
  name: Type.String(),
  address: Nullable(Json),
  timezone: Type.String(),
  contact: Nullable(Json),
  settings: Json,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const siteFields = {
  timezone: Type.Optional(Timezone),
  address: Type.Optional(Nullable(Json)),
  contact: Type.Optional(Nullable(Json)),
  settings: Type.Optional(Json),
};

export const CreateSiteBody = Type.Object({ orgId: Uuid, name: Name, ...siteFields }, { additionalProperties: false });
export const UpdateSiteBody = Type.Object({ name: Type.Optional(Name), ...siteFields }, { additionalProperties: false, description: 'orgId cannot be changed', 'x-fixed-fields': ['orgId'] });
export const SiteList = Paginated(Site);
export const SiteListQuery = Type.Object({ ...PaginationQuery, orgId: Type.Optional(Uuid), organizationId: Type.Optional(Uuid), search: SearchFilter('name') });
