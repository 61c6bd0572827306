-- Single sign-on with OpenID Connect (API.md §10). A tenant's configuration stays in the
-- `sso_config` jsonb of its partner or organization, the client secret sealed inside it
-- (AES-256-GCM, like TOTP seeds); the flow's one-time values live here, so any instance behind
-- the load balancer can finish a sign-in another one started.

-- A sign-in sent to the identity provider and not yet back: looked up by the SHA-256 of its
-- `state`, used once, for 10 minutes. The nonce and PKCE verifier must be sent or compared as they
-- are, so they are kept as they are; they are worth nothing once the row is used or expired.
CREATE TABLE sso_sign_ins (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  state_hash text NOT NULL,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  partner_id uuid NOT NULL REFERENCES partners (id),
  -- null: the partner's own configuration; otherwise the organization's.
  org_id uuid REFERENCES organizations (id),
  -- The configuration the sign-in was started with: a change before the return fails it.
  issuer text NOT NULL,
  client_id text NOT NULL,
  created_at timestamptz(3) NOT NULL,
  expires_at timestamptz(3) NOT NULL,
  used_at timestamptz(3)
);
CREATE UNIQUE INDEX sso_sign_ins_state ON sso_sign_ins (state_hash);
CREATE INDEX sso_sign_ins_expiry ON sso_sign_ins (expires_at);

-- The code the console trades for tokens after the callback: SHA-256 of 32 random bytes, one use,
-- 60 seconds. `mfa_verified`: the identity provider asserted MFA and the tenant trusts it.
CREATE TABLE sso_exchange_codes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  code_hash text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id),
  mfa_verified boolean NOT NULL,
  created_at timestamptz(3) NOT NULL,
  expires_at timestamptz(3) NOT NULL,
  used_at timestamptz(3)
);
CREATE UNIQUE INDEX sso_exchange_codes_code ON sso_exchange_codes (code_hash);
CREATE INDEX sso_exchange_codes_expiry ON sso_exchange_codes (expires_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON sso_sign_ins, sso_exchange_codes TO dms_app;

-- The service's own bookkeeping, like refresh tokens: system scope only.
ALTER TABLE sso_sign_ins ENABLE ROW LEVEL SECURITY;
ALTER TABLE sso_sign_ins FORCE ROW LEVEL SECURITY;
CREATE POLICY sso_sign_ins_system ON sso_sign_ins
  USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');
ALTER TABLE sso_exchange_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE sso_exchange_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY sso_exchange_codes_system ON sso_exchange_codes
  USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');

-- E-mail discovery finds the enabled configuration claiming a domain with one containment match
-- (`sso_config @> '{"enabled": true, "emailDomains": ["example.com"]}'`).
CREATE INDEX partners_sso_config ON partners USING gin (sso_config jsonb_path_ops)
  WHERE sso_config IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX organizations_sso_config ON organizations USING gin (sso_config jsonb_path_ops)
  WHERE sso_config IS NOT NULL AND deleted_at IS NULL;

-- Which of `domains` an enabled configuration of another live tenant claims (a domain routes to one
-- tenant only: such a write is refused with 409). A partner or organization admin writes its
-- configuration in its own scope, where row-level security hides every other tenant, so this one
-- question is answered in the system scope; it returns domain names only. `own_org` null: the
-- writer is partner `own_partner`'s own configuration; both null: a tenant not created yet.
CREATE FUNCTION sso_domains_claimed_elsewhere(domains text[], own_partner uuid, own_org uuid) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp SET app.scope = 'system' AS $$
  SELECT d FROM unnest(domains) d
   WHERE EXISTS (SELECT 1 FROM partners p
                  WHERE p.sso_config @> jsonb_build_object('enabled', true, 'emailDomains', jsonb_build_array(d))
                    AND p.sso_config IS NOT NULL AND p.deleted_at IS NULL
                    AND (own_org IS NOT NULL OR own_partner IS NULL OR p.id <> own_partner))
      OR EXISTS (SELECT 1 FROM organizations o JOIN partners p ON p.id = o.partner_id AND p.deleted_at IS NULL
                  WHERE o.sso_config @> jsonb_build_object('enabled', true, 'emailDomains', jsonb_build_array(d))
                    AND o.sso_config IS NOT NULL AND o.deleted_at IS NULL
                    AND (own_org IS NULL OR o.id <> own_org))
$$;
REVOKE ALL ON FUNCTION sso_domains_claimed_elsewhere(text[], uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sso_domains_claimed_elsewhere(text[], uuid, uuid) TO dms_app;
