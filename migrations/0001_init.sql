-- Foundation: the application role, tenant hierarchy, users and sessions, and the row-level
-- security every tenant table carries. Runs on PostgreSQL 15 and on PGlite (PostgreSQL 18).

-- The role every request runs as. Roles are cluster-wide, so another database may have made it.
DO $$
BEGIN
  CREATE ROLE dms_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

-- A non-superuser owner must be a member to switch to the role; a superuser needs nothing.
DO $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE 'GRANT dms_app TO ' || quote_ident(current_user);
  END IF;
END $$;

GRANT USAGE ON SCHEMA public TO dms_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO dms_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO dms_app;

-- Scope settings written by withTenant(); absent settings mean "no access".
CREATE FUNCTION app_scope() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT coalesce(current_setting('app.scope', true), '') $$;
CREATE FUNCTION app_org_ids() RETURNS uuid[] LANGUAGE sql STABLE
  AS $$ SELECT coalesce(nullif(current_setting('app.org_ids', true), ''), '{}')::uuid[] $$;
CREATE FUNCTION app_partner_id() RETURNS uuid LANGUAGE sql STABLE
  AS $$ SELECT nullif(current_setting('app.partner_id', true), '')::uuid $$;
CREATE FUNCTION app_partner_all() RETURNS boolean LANGUAGE sql STABLE
  AS $$ SELECT coalesce(current_setting('app.partner_all', true), '') = 'true' $$;

CREATE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;

CREATE TABLE partners (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name varchar(255) NOT NULL,
  slug varchar(100) NOT NULL,
  type text NOT NULL DEFAULT 'msp' CHECK (type IN ('msp', 'enterprise', 'internal')),
  plan text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'starter', 'community', 'pro', 'enterprise', 'unlimited')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active', 'suspended', 'churned')),
  max_organizations integer CHECK (max_organizations >= 0),
  max_devices integer CHECK (max_devices >= 0),
  settings jsonb NOT NULL DEFAULT '{}',
  sso_config jsonb,
  billing_email varchar(255),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3)
);
CREATE UNIQUE INDEX partners_live_slug ON partners (slug) WHERE deleted_at IS NULL;
CREATE TRIGGER partners_updated_at BEFORE UPDATE ON partners FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  partner_id uuid NOT NULL REFERENCES partners (id),
  name varchar(255) NOT NULL,
  slug varchar(100) NOT NULL,
  type text NOT NULL DEFAULT 'customer' CHECK (type IN ('customer', 'internal')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'trial', 'churned')),
  max_devices integer CHECK (max_devices >= 0),
  settings jsonb NOT NULL DEFAULT '{}',
  sso_config jsonb,
  contract_start timestamptz(3),
  contract_end timestamptz(3),
  billing_contact jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3)
);
CREATE UNIQUE INDEX organizations_live_slug ON organizations (partner_id, slug) WHERE deleted_at IS NULL;
CREATE INDEX organizations_partner ON organizations (partner_id, created_at, id) WHERE deleted_at IS NULL;
CREATE TRIGGER organizations_updated_at BEFORE UPDATE ON organizations FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE sites (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id),
  name varchar(255) NOT NULL,
  address jsonb,
  timezone varchar(50) NOT NULL DEFAULT 'UTC',
  contact jsonb,
  settings jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX sites_org ON sites (org_id, created_at, id);
CREATE INDEX sites_name ON sites (name, id);
CREATE TRIGGER sites_updated_at BEFORE UPDATE ON sites FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- partner_id is set for partner- and organization-scope users (an organization never changes partner).
CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email varchar(255) NOT NULL,
  name varchar(255) NOT NULL,
  password_hash text NOT NULL,
  scope text NOT NULL CHECK (scope IN ('system', 'partner', 'organization')),
  partner_id uuid REFERENCES partners (id),
  org_id uuid REFERENCES organizations (id),
  role text NOT NULL CHECK (role IN ('admin', 'technician', 'readonly')),
  org_access text NOT NULL DEFAULT 'none' CHECK (org_access IN ('all', 'selected', 'none')),
  org_ids uuid[] NOT NULL DEFAULT '{}',
  mfa_enabled boolean NOT NULL DEFAULT false,
  mfa_secret text,
  mfa_pending_secret text,
  mfa_last_step bigint,
  last_login_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  CONSTRAINT users_scope_shape CHECK (
    (scope = 'system' AND partner_id IS NULL AND org_id IS NULL) OR
    (scope = 'partner' AND partner_id IS NOT NULL AND org_id IS NULL) OR
    (scope = 'organization' AND partner_id IS NOT NULL AND org_id IS NOT NULL))
);
CREATE UNIQUE INDEX users_live_email ON users (lower(email)) WHERE deleted_at IS NULL;
CREATE INDEX users_partner ON users (partner_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX users_org ON users (org_id, created_at, id) WHERE deleted_at IS NULL;
CREATE TRIGGER users_updated_at BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- A session is one sign-in: the family of refresh tokens that rotate from it.
CREATE TABLE sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id),
  mfa_verified boolean NOT NULL,
  ip_address varchar(45),
  user_agent text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  revoked_at timestamptz(3),
  revoked_reason text
);
CREATE INDEX sessions_live_user ON sessions (user_id) WHERE revoked_at IS NULL;

CREATE TABLE refresh_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  spent_at timestamptz(3)
);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);

-- Sign-in attempts per e-mail for the 10-in-15-minutes limit; 'pending' reserves a slot while the
-- password is checked, so parallel guesses cannot slip past the count.
CREATE TABLE login_attempts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email_key text NOT NULL,
  attempted_at timestamptz(3) NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('pending', 'failed'))
);
CREATE INDEX login_attempts_email ON login_attempts (email_key, attempted_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON partners, organizations, sites, users, sessions, refresh_tokens, login_attempts TO dms_app;
GRANT SELECT ON schema_migrations TO dms_app;

-- Row-level security, forced so that even the owner obeys it. The settings are read through
-- scalar subqueries, evaluated once per query (an InitPlan) rather than once per row, and organization
-- sets are matched with IN (SELECT unnest(...)), a hashed subplan: one lookup per row, not a scan of
-- the array (a partner with 200 organizations made every row cost 200 comparisons).
ALTER TABLE partners ENABLE ROW LEVEL SECURITY;
ALTER TABLE partners FORCE ROW LEVEL SECURITY;
CREATE POLICY partners_tenant ON partners
  USING ((SELECT app_scope()) = 'system' OR id = (SELECT app_partner_id()))
  WITH CHECK ((SELECT app_scope()) = 'system' OR id = (SELECT app_partner_id()));

ALTER TABLE organizations ENABLE ROW LEVEL SECURITY;
ALTER TABLE organizations FORCE ROW LEVEL SECURITY;
CREATE POLICY organizations_tenant ON organizations
  USING ((SELECT app_scope()) = 'system' OR id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND (SELECT app_partner_all()) AND partner_id = (SELECT app_partner_id())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND partner_id = (SELECT app_partner_id())));

ALTER TABLE sites ENABLE ROW LEVEL SECURITY;
ALTER TABLE sites FORCE ROW LEVEL SECURITY;
CREATE POLICY sites_tenant ON sites
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));

-- Partner callers see their partner's partner-level users; everyone sees users of reachable orgs.
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE users FORCE ROW LEVEL SECURITY;
CREATE POLICY users_tenant ON users
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND org_id IS NULL AND partner_id = (SELECT app_partner_id())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND org_id IS NULL AND partner_id = (SELECT app_partner_id())));

-- Credentials tables belong to the service acting for itself (system scope); a tenant caller
-- reaches only the sessions of users it can see (to end them when it changes such a user).
ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY sessions_tenant ON sessions
  USING ((SELECT app_scope()) = 'system' OR EXISTS (SELECT 1 FROM users u WHERE u.id = sessions.user_id))
  WITH CHECK ((SELECT app_scope()) = 'system' OR EXISTS (SELECT 1 FROM users u WHERE u.id = sessions.user_id));
ALTER TABLE refresh_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE refresh_tokens FORCE ROW LEVEL SECURITY;
CREATE POLICY refresh_tokens_system ON refresh_tokens USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');
ALTER TABLE login_attempts ENABLE ROW LEVEL SECURITY;
ALTER TABLE login_attempts FORCE ROW LEVEL SECURITY;
CREATE POLICY login_attempts_system ON login_attempts USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');
