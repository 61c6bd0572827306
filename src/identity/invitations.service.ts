// Invitations (API.md §10): an administrator invites someone by e-mail, inside its own reach and
// never granting more than it holds (the rules of POST /users: users.service's grantOf and
// placeWithinReach); the invitee chooses a password through the mailed link and is signed in.
import type { Database, Transaction } from '../db/database.js';
import { readTenant, SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { AppError, notFound, permissionDenied } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { callerEvent, type AuditAction, type RecordAudit } from '../audit/recorder.js';
import type { Mailer } from '../mail/mailer.js';
import { invitationMail } from './account-mails.js';
import type { InvitationView } from './invitation.schemas.js';
import * as invitations from './invitations.repo.js';
import type { InvitationRow } from './invitations.repo.js';
import { hashLinkToken, isLinkToken, newLinkToken } from './link-tokens.js';
import { hashPassword } from './passwords.js';
import type { SessionIssuer, SessionTokens } from './session-issuer.js';
import { accessView, assertManageable, grantOf, placeWithinReach, type NewUserInput } from './users.service.js';
import * as users from './users.repo.js';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

export interface CreateInvitationInput extends NewUserInput {
  email: string;
  name: string;
}

export interface ListInvitationsQuery {
  page?: number;
  limit?: number;
  skipCount?: boolean;
  partnerId?: string;
  orgId?: string;
  scope?: NewUserInput['scope'];
}

export interface AcceptInvitationInput {
  token: string;
  password: string;
  name?: string;
}

export function invitationView(row: InvitationRow): InvitationView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    ...accessView(row),
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
  };
}

/** What an audit entry says about an invitation: never its token or the token's hash. */
function auditSnapshot(row: InvitationRow) {
  return {
    email: row.email, name: row.name, scope: row.scope, role: row.role, partnerId: row.partner_id, orgId: row.org_id,
    orgAccess: row.scope === 'partner' ? row.org_access : null, orgIds: row.org_ids, expiresAt: row.expires_at.toISOString(),
  };
}

const invitationInvalid = () => new AppError('TOKEN_INVALID', 'This invitation link is invalid, already used, withdrawn or expired');

export function createInvitationsService(deps: {
  db: Database;
  issuer: SessionIssuer;
  recordAudit: RecordAudit;
  mailer: Mailer;
  publicUrl: string;
  now: () => number;
}) {
  const { db, issuer, recordAudit, mailer, now } = deps;
  const system = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, SYSTEM_SCOPE, fn);
  // In the invitation's organization chain, or the platform chain for partner- and system-level ones.
  const invitationEvent = (caller: Caller, meta: RequestMeta, action: AuditAction, row: InvitationRow, details: Record<string, unknown>) =>
    callerEvent(caller, meta, { orgId: row.org_id, action, resource: { type: 'user_invitation', id: row.id, name: row.email }, details });

  /**
   * Stores the invitation, then mails the link. Both the e-mail of a live user and that of an open
   * invitation are 409, as a duplicate user is; an expired invitation gives its address up to a
   * new one. A link that cannot be mailed withdraws the invitation again (503), so the address is
   * free for another try and no token lives that nobody received.
   */
  async function invite(caller: Caller, input: CreateInvitationInput, meta: RequestMeta): Promise<InvitationView> {
    const grant = grantOf(caller, input);
    const email = input.email.trim();
    const at = new Date(now());
    // System scope: the address is unique across tenants, as users' are (users_live_email). The
    // answer waits until the reach checks have passed, so a request out of reach is 403 whatever the address.
    const { userExists } = await system((tx) => invitations.clearExpiredForEmail(tx, email, at));

    const token = newLinkToken('inv');
    const row = await withTenant(db, caller.tenant, async (tx) => {
      const stored = await placeWithinReach(tx, caller, input, grant, (p) => {
        if (userExists) throw new AppError('CONFLICT', 'A user with this email already exists');
        // An open invitation for the address: user_invitations_open_email refuses the insert, a 409.
        return invitations.insertInvitation(tx, {
          ...p, email, name: input.name, tokenHash: hashLinkToken(token), invitedBy: caller.userId, at, expiresAt: new Date(at.getTime() + INVITATION_TTL_MS),
        });
      });
      await recordAudit(tx, invitationEvent(caller, meta, 'user.invite', stored, { after: auditSnapshot(stored) }));
      return stored;
    });

    const link = `${deps.publicUrl}/accept-invitation#token=${token}`;
    try {
      await mailer.send(invitationMail(row.email, caller, row.role, link, row.expires_at), meta.log);
    } catch {
      // The mailer has logged why (never the message itself).
      await withTenant(db, caller.tenant, async (tx) => {
        const withdrawn = await invitations.deleteOpenInvitation(tx, row.id, new Date(now()));
        if (withdrawn) await recordAudit(tx, invitationEvent(caller, meta, 'user.invitation.delete', withdrawn, { before: auditSnapshot(withdrawn), reason: 'mail_failed' }));
      });
      throw new AppError('SERVICE_UNAVAILABLE', 'The invitation e-mail could not be sent, so the invitation was withdrawn; try again later');
    }
    return invitationView(row);
  }

  async function list(caller: Caller, query: ListInvitationsQuery): Promise<PaginatedResult<InvitationView>> {
    const page = pageOf(query);
    return readTenant(db, caller.tenant, async (tx) => {
      const reach = caller.accessibleOrgIds && { orgIds: caller.accessibleOrgIds, partnerId: caller.scope === 'partner' ? caller.partnerId : null };
      const filter: invitations.InvitationListFilter = { reach };
      if (query.partnerId) filter.partnerId = query.partnerId;
      if (query.orgId) filter.orgId = query.orgId;
      if (query.scope) filter.scope = query.scope;
      const { rows, total } = await invitations.listOpenInvitations(tx, filter, page.limit, page.offset, page.withTotal);
      return paginated(rows.map(invitationView), page, total);
    });
  }

  /** Withdraws an open invitation (expired or not): its token stops working at once. */
  async function remove(caller: Caller, id: string, meta: RequestMeta): Promise<{ success: true }> {
    const deleted = await withTenant(db, caller.tenant, async (tx) => {
      const row = await invitations.deleteOpenInvitation(tx, id, new Date(now()));
      if (!row) return false;
      assertManageable(caller, row); // throws, rolling the delete back
      await recordAudit(tx, invitationEvent(caller, meta, 'user.invitation.delete', row, { before: auditSnapshot(row) }));
      return true;
    });
    if (deleted) return { success: true };
    // As for users (API.md §2): outside the caller's reach 403, nowhere at all 404.
    const exists = await system((tx) => invitations.openInvitationExists(tx, id));
    throw exists ? permissionDenied('This invitation is outside your reach') : notFound('Invitation');
  }

  /**
   * Creates the invited user and signs it in, in one transaction with marking the invitation
   * accepted: of two accepts of one token exactly one wins. The token is looked up before the
   * password is hashed, so made-up tokens cost no argon2; a body refused by validation never gets
   * here, so it does not use the token up.
   */
  async function accept(input: AcceptInvitationInput, meta: RequestMeta): Promise<SessionTokens> {
    if (!isLinkToken('inv', input.token)) throw invitationInvalid();
    const tokenHash = hashLinkToken(input.token);
    if (!(await system((tx) => invitations.findUsableInvitation(tx, tokenHash, new Date(now()))))) throw invitationInvalid();
    const passwordHash = await hashPassword(input.password);
    return system(async (tx) => {
      const invitation = await invitations.claimInvitation(tx, tokenHash, new Date(now()));
      if (!invitation) throw invitationInvalid();
      const fields = {
        email: invitation.email, name: input.name ?? invitation.name, passwordHash, scope: invitation.scope, role: invitation.role,
        partnerId: invitation.partner_id, orgId: invitation.org_id, orgAccess: invitation.org_access, orgIds: invitation.org_ids,
      };
      // Someone took the address meanwhile: users_live_email refuses the user (409) and the claim rolls back.
      const user = invitation.scope === 'system' ? await users.insertUser(tx, fields) : await users.insertTenantUser(tx, fields);
      // Its partner or organization was deleted since: the invitation leads nowhere.
      if (!user) throw invitationInvalid();
      await invitations.recordAcceptingUser(tx, invitation.id, user.id);
      await recordAudit(tx, {
        orgId: user.org_id,
        actor: { type: 'user', id: user.id, email: user.email },
        action: 'user.invitation.accept',
        resource: { type: 'user', id: user.id, name: user.email },
        details: { invitationId: invitation.id, invitedBy: invitation.invited_by, after: { ...auditSnapshot(invitation), name: user.name } },
        ip: meta.ip,
        userAgent: meta.userAgent,
      });
      return issuer.start(tx, user, { mfaVerified: false, meta, details: { method: 'invitation' } });
    });
  }

  return { invite, list, remove, accept };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
