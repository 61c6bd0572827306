// Request and response schemas of /auth and /users: the contract, validated in and serialised out.
import { Type, type Static } from 'typebox';
import { PaginationQuery, Paginated } from '../http/pagination.js';
import { ROLES, PERMISSIONS } from './permissions.js';

import { IdParams, Nullable, Success, Timestamp, Uuid, StringEnum } from '../http/common-schemas.js';

export { IdParams, Success };
export const NullableUuid = Nullable(Uuid);
const Email = Type.String({ format: 'email', maxLength: 255 });
const Password = Type.String({ minLength: 8, maxLength: 256, description: '8 to 256 characters' });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Scope = StringEnum(['system', 'partner', 'organization'] as const);
const Role = StringEnum(ROLES);
const OrgAccess = StringEnum(['all', 'selected', 'none'] as const);


// Who a user is: shared by /auth/me and the user resource.
const UserIdentity = {
  id: Uuid,
  email: Type.String(),
  name: Type.String(),
  scope: Scope,
  partnerId: NullableUuid,
  orgId: NullableUuid,
  role: Role,
  mfaEnabled: Type.Boolean(),
};

export const Me = Type.Object({
  ...UserIdentity,
  permissions: Type.Array(StringEnum(PERMISSIONS)),
  mfaVerified: Type.Boolean(),
});
export type Me = Static<typeof Me>;

export const SessionTokens = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String(),
  expiresIn: Type.Integer({ description: 'Access token lifetime in seconds' }),
  user: Me,
});

export const MfaChallenge = Type.Object({
  mfaRequired: Type.Literal(true),
  mfaToken: Type.String({ description: 'Valid for 5 minutes; send it with a TOTP code to /auth/mfa/verify' }),
});

export const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 255 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

export const MfaVerifyBody = Type.Object(
  {
    mfaToken: Type.String({ minLength: 1, maxLength: 2048 }),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'The current TOTP code' })),
    recoveryCode: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'One of the recovery codes (each works once), instead of a code' })),
  },
  { additionalProperties: false, description: 'Exactly one of code and recoveryCode' },
);

export const SessionItem = Type.Object({
  id: Uuid,
  createdAt: Timestamp,
  lastUsedAt: Type.String({ format: 'date-time', description: 'When the session last issued tokens: sign-in or refresh (a client refreshes every 15 minutes)' }),
  ipAddress: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  mfaVerified: Type.Boolean(),
  sso: Type.Boolean({ description: 'Signed in through the tenant\'s identity provider' }),
  current: Type.Boolean({ description: 'The session of the access token making this request' }),
});
export const SessionList = Paginated(SessionItem);
export const SessionListQuery = Type.Object({ ...PaginationQuery });
export const RevokedSessions = Type.Object({ success: Type.Literal(true), revoked: Type.Integer({ description: 'How many sessions ended' }) });
export const RecoveryCodes = Type.Object({
  codes: Type.Array(Type.String(), { minItems: 10, maxItems: 10, description: 'Shown once; each works once in place of a TOTP code' }),
});
export const RecoveryCodeStanding = Type.Object({
  remaining: Type.Integer({ description: 'Unused codes of the current set' }),
  createdAt: Nullable(Timestamp, { description: 'When the current set was made; null when there is none' }),
});
export const ChangePasswordBody = Type.Object({ currentPassword: Type.String({ minLength: 1, maxLength: 1024 }), newPassword: Password }, { additionalProperties: false });

// Any text: a malformed token is 401 like an unknown one (API.md §3), decided by its pattern before any lookup.
export const RefreshBody = Type.Object({ refreshToken: Type.String() }, { additionalProperties: false });

export const MfaSetup = Type.Object({
  secret: Type.String({ description: 'Base32 TOTP seed' }),
  otpauthUrl: Type.String({ description: 'otpauth:// URI for authenticator apps (QR code)' }),
});

export const MfaEnableBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 16 }) }, { additionalProperties: false });


export const User = Type.Object({
  ...UserIdentity,
  orgAccess: Nullable(OrgAccess, { description: 'Partner-scope users only' }),
  orgIds: Type.Array(Uuid, { description: 'Organizations reached when orgAccess is "selected"' }),
  lastLoginAt: Nullable(Timestamp),
  disabled: Type.Boolean({ description: 'A disabled user cannot sign in by any means; its sessions ended when it was disabled' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type UserView = Static<typeof User>;

export const UserList = Paginated(User);

export const CreateUserBody = Type.Object(
  {
    email: Email,
    name: Name,
    password: Password,
    scope: Scope,
    role: Role,
    partnerId: Type.Optional(Uuid),
    orgId: Type.Optional(Uuid),
    orgAccess: Type.Optional(OrgAccess),
    orgIds: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    email: Type.Optional(Email),
    name: Type.Optional(Name),
    password: Type.Optional(Password),
    role: Type.Optional(Role),
    orgAccess: Type.Optional(OrgAccess),
    orgIds: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })),
    disabled: Type.Optional(Type.Boolean({ description: 'true: the user can no longer sign in and its sessions end at once; false: enabled again' })),
  },
  { additionalProperties: false },
);

export const ListUsersQuery = Type.Object({
  ...PaginationQuery,
  partnerId: Type.Optional(Uuid),
  orgId: Type.Optional(Uuid),
  scope: Type.Optional(Scope),
});

export const RegisterBody = Type.Object(
  { partnerName: Name, name: Name, email: Email, password: Password },
  { additionalProperties: false },
);

export const Registration = Type.Object({
  partner: Type.Object({ id: Uuid, name: Type.String(), slug: Type.String(), status: Type.String() }),
  user: User,
});
