// Partner self-signup (API.md §3): a pending partner and its first admin, in one transaction.
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { AppError } from '../errors.js';
import { createPendingPartner } from '../tenancy/partners.service.js';
import type { PartnerSummary } from '../tenancy/partners.repo.js';
import { hashPassword } from './passwords.js';
import * as users from './users.repo.js';
import { userView, type UserView } from './users.service.js';

export interface RegisterInput {
  partnerName: string;
  name: string;
  email: string;
  password: string;
}

export function createRegistrationService(deps: { db: Database }) {
  async function register(input: RegisterInput): Promise<{ partner: PartnerSummary; user: UserView }> {
    const passwordHash = await hashPassword(input.password);
    try {
      return await withTenant(deps.db, SYSTEM_SCOPE, async (tx) => {
        if (await users.findUserByEmail(tx, input.email.trim())) throw new AppError('CONFLICT', 'A user with this email already exists');
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
        return { partner, user: userView(user) };
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('CONFLICT', 'A user with this email or a partner with this slug already exists');
      throw err;
    }
  }
  return { register };
}

export type RegistrationService = ReturnType<typeof createRegistrationService>;
