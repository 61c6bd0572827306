// Partner self-signup (API.md §3): a pending partner and its first admin, in one transaction.
import { AppError } from '../errors.js';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { createPendingPartner } from '../tenancy/partners.service.js';
import type { PartnerSummary } from '../tenancy/partners.repo.js';
import { hashPassword } from './passwords.js';
import type { RequestMeta } from '../http/request-meta.js';
import type { RecordAudit } from '../audit/recorder.js';
import * as users from './users.repo.js';
import { userView, type UserView } from './users.service.js';

export interface RegisterInput {
  partnerName: string;
  name: string;
  email: string;
  password: string;
}

/** `open`: ALLOW_PARTNER_SIGNUP; closed, every registration is refused. */
export function createRegistrationService(deps: { db: Database; recordAudit: RecordAudit; open: boolean }) {
  async function register(input: RegisterInput, meta: RequestMeta): Promise<{ partner: PartnerSummary; user: UserView }> {
    if (!deps.open) throw new AppError('PERMISSION_DENIED', 'Partner self-signup is disabled on this server');
    const passwordHash = await hashPassword(input.password);
    // A taken e-mail: users_live_email refuses the user (a 409) and the partner rolls back with it.
    return withTenant(deps.db, SYSTEM_SCOPE, async (tx) => {
      const partner = await createPendingPartner(tx, input.partnerName);
      const user = await users.insertUser(tx, {
        email: input.email.trim(),
        name: input.name,
        passwordHash,
        scope: 'partner',
        partnerId: partner.id,
        orgId: null,
        role: 'admin',
        orgAccess: 'all',
        orgIds: [],
      });
      // Self-signup: the new admin is the actor; neither has an organization, so the platform chain records it.
      const actor = { type: 'user' as const, id: user.id, email: user.email };
      const common = { orgId: null, actor, ip: meta.ip, userAgent: meta.userAgent };
      await deps.recordAudit(tx, { ...common, action: 'partner.create', resource: { type: 'partner', id: partner.id, name: partner.name }, details: { slug: partner.slug, status: partner.status, selfSignup: true } });
      await deps.recordAudit(tx, { ...common, action: 'user.create', resource: { type: 'user', id: user.id, name: user.email }, details: { after: { email: user.email, scope: 'partner', role: 'admin', partnerId: partner.id } } });
      return { partner, user: userView(user) };
    });
  }
  return { register };
}

export type RegistrationService = ReturnType<typeof createRegistrationService>;
