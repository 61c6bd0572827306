// SQL of single sign-on: the configurations a sign-in goes through (read from partners and
// organizations), pending sign-ins and exchange codes. Run in the system scope, except
// domainsClaimedElsewhere, which runs in the writer's scope (see 0017_sso.sql).
import type { Queryable } from '../../db/database.js';
import { userColumns, type UserRow } from '../users.repo.js';

/** Whose configuration: a partner's own (orgId null) or one of its organizations'. */
export interface SsoOwner {
  partnerId: string;
  orgId: string | null;
}

export interface TenantSsoConfig extends SsoOwner {
  /** The raw `sso_config`: read it with storedSsoConfig. */
  config: unknown;
  /** Status of the partner (and of the organization, for an organization's configuration). */
  partnerStatus: string;
  orgStatus: string | null;
}

interface ConfigRow { partner_id: string; org_id: string | null; sso_config: unknown; partner_status: string; org_status: string | null }
const toConfig = (row: ConfigRow | undefined): TenantSsoConfig | null =>
  row ? { partnerId: row.partner_id, orgId: row.org_id, config: row.sso_config, partnerStatus: row.partner_status, orgStatus: row.org_status } : null;

const PARTNER_CONFIG = `select p.id as partner_id, null::uuid as org_id, p.sso_config, p.status as partner_status, null as org_status
  from partners p where p.deleted_at is null`;
const ORG_CONFIG = `select o.partner_id, o.id as org_id, o.sso_config, p.status as partner_status, o.status as org_status
  from organizations o join partners p on p.id = o.partner_id and p.deleted_at is null where o.deleted_at is null`;

/** The configuration of a live partner or organization (its partner live too). */
export async function configOf(tx: Queryable, owner: SsoOwner): Promise<TenantSsoConfig | null> {
  const { rows } = owner.orgId === null
    ? await tx.query<ConfigRow>(`${PARTNER_CONFIG} and p.id = $1`, [owner.partnerId])
    : await tx.query<ConfigRow>(`${ORG_CONFIG} and o.id = $1 and o.partner_id = $2`, [owner.orgId, owner.partnerId]);
  return toConfig(rows[0]);
}

/** The enabled configuration claiming an e-mail domain (one at most: writes refuse a second). */
export async function configClaimingDomain(tx: Queryable, domain: string): Promise<TenantSsoConfig | null> {
  const claim = JSON.stringify({ enabled: true, emailDomains: [domain] });
  const { rows } = await tx.query<ConfigRow>(
    `${PARTNER_CONFIG} and p.sso_config is not null and p.sso_config @> $1::jsonb
     union all
     ${ORG_CONFIG} and o.sso_config is not null and o.sso_config @> $1::jsonb
     limit 1`,
    [claim],
  );
  return toConfig(rows[0]);
}

/** A live user by e-mail, any case (e-mails of live users are unique across tenants). */
export async function findUserByEmail(tx: Queryable, email: string): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(`select ${userColumns('u')} from users u where lower(u.email) = lower($1) and u.deleted_at is null`, [email]);
  return rows[0] ?? null;
}

/**
 * Which of these domains another tenant's enabled configuration claims. Configuration writes take
 * turns on one lock (held to commit), so two tenants cannot claim a domain at the same moment.
 */
export async function domainsClaimedElsewhere(tx: Queryable, domains: string[], owner: SsoOwner | null): Promise<string[]> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('sso-email-domains'))`);
  const { rows } = await tx.query<{ domain: string }>(
    `select d as domain from sso_domains_claimed_elsewhere($1::text[], $2::uuid, $3::uuid) d`,
    [domains, owner?.partnerId ?? null, owner?.orgId ?? null],
  );
  return rows.map((r) => r.domain);
}

// --- pending sign-ins ----------------------------------------------------------------------------

export interface PendingSignIn extends SsoOwner {
  nonce: string;
  codeVerifier: string;
  issuer: string;
  clientId: string;
}

/**
 * Stores a started sign-in unless the client's address already started `addressMax` since
 * `since` (false: refused), and keeps at most `emailMax` unused ones per e-mail, the newest: a
 * person retrying drops their oldest attempts instead of being refused. One statement.
 */
export async function insertSignIn(
  tx: Queryable,
  s: PendingSignIn & { stateHash: string; at: Date; expiresAt: Date; emailKey: string; clientKey: string; since: Date; emailMax: number; addressMax: number },
): Promise<boolean> {
  const { rows } = await tx.query<{ id: string }>(
    `with fresh as (
       insert into sso_sign_ins (state_hash, nonce, code_verifier, partner_id, org_id, issuer, client_id, created_at, expires_at, email_key, client_key)
       select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
        where (select count(*) from sso_sign_ins where client_key = $11 and created_at > $12) < $14
       returning id),
     crowded as (
       delete from sso_sign_ins where id in (
         select id from sso_sign_ins where email_key = $10 and used_at is null and exists (select 1 from fresh)
          order by created_at desc offset $13 - 1))
     select id from fresh`,
    [s.stateHash, s.nonce, s.codeVerifier, s.partnerId, s.orgId, s.issuer, s.clientId, s.at, s.expiresAt, s.emailKey, s.clientKey, s.since, s.emailMax, s.addressMax],
  );
  return rows.length > 0;
}

export type ClaimedSignIn = { outcome: 'ok'; signIn: PendingSignIn } | { outcome: 'unknown' | 'used' | 'expired' };

/** Uses up the sign-in of a state: it answers once, whatever happens next. */
export async function claimSignIn(tx: Queryable, stateHash: string, at: Date): Promise<ClaimedSignIn> {
  const { rows } = await tx.query<{ nonce: string; code_verifier: string; partner_id: string; org_id: string | null; issuer: string; client_id: string; expires_at: Date; was_used: Date | null }>(
    `update sso_sign_ins s set used_at = coalesce(s.used_at, $2)
       from (select id, used_at as was_used from sso_sign_ins where state_hash = $1 for update) old
      where s.id = old.id
      returning s.nonce, s.code_verifier, s.partner_id, s.org_id, s.issuer, s.client_id, s.expires_at, old.was_used`,
    [stateHash, at],
  );
  const row = rows[0];
  if (!row) return { outcome: 'unknown' };
  if (row.was_used !== null) return { outcome: 'used' };
  if (row.expires_at <= at) return { outcome: 'expired' };
  return {
    outcome: 'ok',
    signIn: { nonce: row.nonce, codeVerifier: row.code_verifier, partnerId: row.partner_id, orgId: row.org_id, issuer: row.issuer, clientId: row.client_id },
  };
}

// --- exchange codes ------------------------------------------------------------------------------

export async function insertExchangeCode(tx: Queryable, c: { codeHash: string; userId: string; mfaVerified: boolean; at: Date; expiresAt: Date }): Promise<void> {
  await tx.query(
    `insert into sso_exchange_codes (code_hash, user_id, mfa_verified, created_at, expires_at) values ($1, $2, $3, $4, $5)`,
    [c.codeHash, c.userId, c.mfaVerified, c.at, c.expiresAt],
  );
}

/** Spends a live, unused code; null for an unknown, used or expired one. */
export async function spendExchangeCode(tx: Queryable, codeHash: string, at: Date): Promise<{ user_id: string; mfa_verified: boolean } | null> {
  const { rows } = await tx.query<{ user_id: string; mfa_verified: boolean }>(
    `update sso_exchange_codes set used_at = $2 where code_hash = $1 and used_at is null and expires_at > $2 returning user_id, mfa_verified`,
    [codeHash, at],
  );
  return rows[0] ?? null;
}

/**
 * Deletes a bounded batch of sign-ins and codes that expired before `before`: anyone can start a
 * sign-in, so each new one clears some of the old (nothing else reads them once expired).
 */
export async function pruneExpired(tx: Queryable, before: Date, limit: number): Promise<void> {
  await tx.query(
    `with s as (delete from sso_sign_ins where id in (select id from sso_sign_ins where expires_at < $1 order by expires_at limit $2)),
          c as (delete from sso_exchange_codes where id in (select id from sso_exchange_codes where expires_at < $1 order by expires_at limit $2))
     select 1`,
    [before, limit],
  );
}
