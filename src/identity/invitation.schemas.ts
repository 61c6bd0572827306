// Request and response schemas of invitations (/users/invitations, /auth/invitations/accept) and
// password reset (/auth/password/...): the contract of API.md §10.
import { Type, type Static } from 'typebox';
import { Paginated, PaginationQuery } from '../http/pagination.js';
import { Nullable, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';
import { ROLES } from './permissions.js';

const Email = Type.String({ format: 'email', maxLength: 255 });
const Password = Type.String({ minLength: 8, maxLength: 256, description: '8 to 256 characters' });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Scope = StringEnum(['system', 'partner', 'organization'] as const);
const Role = StringEnum(ROLES);
const OrgAccess = StringEnum(['all', 'selected', 'none'] as const);
/** A token from a mailed link (the part after `#token=`). */
// Any text: a malformed token is 400 TOKEN_INVALID like an unknown one (API.md §10), decided by its pattern.
const LinkToken = Type.String({ description: 'The token from the link in the e-mail' });

export const CreateInvitationBody = Type.Object(
  {
    email: Email,
    name: Name,
    scope: Scope,
    role: Role,
    partnerId: Type.Optional(Uuid),
    orgId: Type.Optional(Uuid),
    orgAccess: Type.Optional(OrgAccess),
    orgIds: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

export const Invitation = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Type.String(),
  scope: Scope,
  partnerId: Nullable(Uuid),
  orgId: Nullable(Uuid),
  role: Role,
  orgAccess: Nullable(OrgAccess, { description: 'What the user will reach: partner-scope invitations only' }),
  orgIds: Type.Array(Uuid, { description: 'Organizations reached when orgAccess is "selected"' }),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});
export type InvitationView = Static<typeof Invitation>;

export const InvitationList = Paginated(Invitation);

export const ListInvitationsQuery = Type.Object({
  ...PaginationQuery,
  partnerId: Type.Optional(Uuid),
  orgId: Type.Optional(Uuid),
  scope: Type.Optional(Scope),
});

export const AcceptInvitationBody = Type.Object(
  { token: LinkToken, password: Password, name: Type.Optional(Name) },
  { additionalProperties: false },
);

export const ForgotPasswordBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 255, description: 'The account’s e-mail address' }) },
  { additionalProperties: false },
);

export const ResetPasswordBody = Type.Object({ token: LinkToken, password: Password }, { additionalProperties: false });
