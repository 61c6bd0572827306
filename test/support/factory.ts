// Builds tenants and users straight into the database (system scope), so every test owns its data
// and tests never depend on each other or on order.
import { randomBytes } from 'node:crypto';
import { createHmac } from 'node:crypto';
import type { Database } from '../../src/db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../../src/db/tenant-scope.js';
import { hashPassword } from '../../src/identity/passwords.js';
import { generateKey } from '../../src/api-keys/key-material.js';
import { hashAgentToken } from '../../src/devices/agent-credential.js';

const unique = () => randomBytes(5).toString('hex');
export const TEST_PASSWORD = 'correct horse battery staple';
let passwordHash: Promise<string> | null = null;

export interface TestPartner { id: string; slug: string }
export interface TestOrg { id: string; partnerId: string }
export interface TestUser {
  id: string;
  email: string;
  password: string;
  scope: 'system' | 'partner' | 'organization';
  partnerId: string | null;
  orgId: string | null;
}

export async function createPartner(db: Database, opts: { status?: string } = {}): Promise<TestPartner> {
  const slug = `partner-${unique()}`;
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into partners (name, slug, status) values ($1, $2, $3) returning id`,
      [`Partner ${slug}`, slug, opts.status ?? 'active'],
    );
    return { id: rows[0]!.id, slug };
  });
}

export async function createOrg(db: Database, partnerId: string, opts: { status?: string; deleted?: boolean } = {}): Promise<TestOrg> {
  const slug = `org-${unique()}`;
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into organizations (partner_id, name, slug, status, deleted_at) values ($1, $2, $3, $4, $5) returning id`,
      [partnerId, `Org ${slug}`, slug, opts.status ?? 'active', opts.deleted ? new Date() : null],
    );
    return { id: rows[0]!.id, partnerId };
  });
}

export async function createSite(db: Database, orgId: string): Promise<{ id: string }> {
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(`insert into sites (org_id, name) values ($1, $2) returning id`, [orgId, `Site ${unique()}`]);
    return { id: rows[0]!.id };
  });
}

export async function createUser(
  db: Database,
  opts: {
    scope: 'system' | 'partner' | 'organization';
    role?: 'admin' | 'technician' | 'readonly';
    partnerId?: string;
    orgId?: string;
    orgAccess?: 'all' | 'selected' | 'none';
    orgIds?: string[];
  },
): Promise<TestUser> {
  passwordHash ??= hashPassword(TEST_PASSWORD);
  const email = `user-${unique()}@example.test`;
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    let partnerId = opts.partnerId ?? null;
    if (opts.scope === 'organization' && !partnerId) {
      const { rows } = await tx.query<{ partner_id: string }>(`select partner_id from organizations where id = $1`, [opts.orgId]);
      partnerId = rows[0]!.partner_id;
    }
    const { rows } = await tx.query<{ id: string }>(
      `insert into users (email, name, password_hash, scope, partner_id, org_id, role, org_access, org_ids)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9::uuid[]) returning id`,
      [
        email,
        `User ${email}`,
        await passwordHash,
        opts.scope,
        opts.scope === 'system' ? null : partnerId,
        opts.scope === 'organization' ? opts.orgId : null,
        opts.role ?? 'admin',
        opts.scope === 'partner' ? (opts.orgAccess ?? 'all') : 'none',
        opts.orgIds ?? [],
      ],
    );
    return {
      id: rows[0]!.id,
      email,
      password: TEST_PASSWORD,
      scope: opts.scope,
      partnerId: opts.scope === 'system' ? null : partnerId,
      orgId: opts.orgId ?? null,
    };
  });
}

/** A partner with two organizations and an admin of every scope, the usual cast of a test. */
export async function createTenant(db: Database) {
  const partner = await createPartner(db);
  const orgA = await createOrg(db, partner.id);
  const orgB = await createOrg(db, partner.id);
  const partnerAdmin = await createUser(db, { scope: 'partner', partnerId: partner.id, orgAccess: 'all' });
  const orgAdmin = await createUser(db, { scope: 'organization', orgId: orgA.id });
  return { partner, orgA, orgB, partnerAdmin, orgAdmin };
}

/** An API key straight into the database; returns the key itself, as create would show it once. */
export async function createApiKey(
  db: Database,
  orgId: string,
  opts: { scopes?: string[]; rateLimit?: number; expiresAt?: Date | null; status?: string } = {},
): Promise<{ id: string; key: string }> {
  const material = generateKey();
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into api_keys (org_id, name, key_hash, key_prefix, scopes, rate_limit, expires_at, status)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning id`,
      [orgId, `Key ${unique()}`, material.keyHash, material.keyPrefix, opts.scopes ?? ['*'], opts.rateLimit ?? 1000, opts.expiresAt ?? null, opts.status ?? 'active'],
    );
    return { id: rows[0]!.id, key: material.key };
  });
}

/** An enrolled device straight into the database, with its agent's id and token. */
export async function createDevice(db: Database, orgId: string, opts: { siteId?: string; hostname?: string } = {}): Promise<{ id: string; agentId: string; authToken: string; orgId: string; siteId: string }> {
  const siteId = opts.siteId ?? (await createSite(db, orgId)).id;
  const agentId = randomBytes(32).toString('hex');
  const authToken = randomBytes(32).toString('base64url');
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into devices (org_id, site_id, agent_id, auth_token_hash, hostname, os_type, os_version, architecture, agent_version)
       values ($1, $2, $3, $4, $5, 'linux', '6.1', 'x86_64', '1.0.0') returning id`,
      [orgId, siteId, agentId, hashAgentToken(authToken), opts.hostname ?? `host-${unique()}`],
    );
    return { id: rows[0]!.id, agentId, authToken, orgId, siteId };
  });
}

/**
 * An enrollment key straight into the database; returns the key itself, as create would show it
 * once. `pepper` is the app's ENROLLMENT_KEY_PEPPER (config.enrollmentKeyPepper): keys are stored as
 * HMAC-SHA-256 under it, so a key made with another pepper is unknown to the app.
 */
export async function createEnrollmentKey(
  db: Database,
  orgId: string,
  opts: { pepper: string; siteId?: string | null; name?: string; maxUsage?: number | null; expiresAt?: Date },
): Promise<{ id: string; key: string; orgId: string }> {
  const key = randomBytes(32).toString('hex');
  const keyHash = createHmac('sha256', opts.pepper).update(key, 'utf8').digest('hex');
  return withTenant(db, SYSTEM_SCOPE, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into enrollment_keys (org_id, site_id, name, key_hash, max_usage, expires_at) values ($1, $2, $3, $4, $5, $6) returning id`,
      [orgId, opts.siteId ?? null, opts.name ?? `Enrollment ${unique()}`, keyHash, opts.maxUsage === undefined ? 1 : opts.maxUsage, opts.expiresAt ?? new Date(Date.now() + 3_600_000)],
    );
    return { id: rows[0]!.id, key, orgId };
  });
}
