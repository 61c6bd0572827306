-- Identity beyond passwords, part two (API.md §10): invitations and password reset by e-mail.
-- Tokens are stored as SHA-256 of 32 random bytes: high entropy, so a fast hash suffices and a
-- leaked table gives nothing to replay.

-- An invitation carries the /users create body without a password. It has the same scope shape
-- and the same row-level security as users, so a tenant sees only the invitations in its reach.
CREATE TABLE user_invitations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email varchar(255) NOT NULL,
  name varchar(255) NOT NULL,
  scope text NOT NULL CHECK (scope IN ('system', 'partner', 'organization')),
  partner_id uuid REFERENCES partners (id),
  org_id uuid REFERENCES organizations (id),
  role text NOT NULL CHECK (role IN ('admin', 'technician', 'readonly')),
  org_access text NOT NULL DEFAULT 'none' CHECK (org_access IN ('all', 'selected', 'none')),
  org_ids uuid[] NOT NULL DEFAULT '{}',
  token_hash text NOT NULL,
  invited_by uuid REFERENCES users (id),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  accepted_at timestamptz(3),
  accepted_user_id uuid REFERENCES users (id),
  deleted_at timestamptz(3),
  CONSTRAINT user_invitations_scope_shape CHECK (
    (scope = 'system' AND partner_id IS NULL AND org_id IS NULL) OR
    (scope = 'partner' AND partner_id IS NOT NULL AND org_id IS NULL) OR
    (scope = 'organization' AND partner_id IS NOT NULL AND org_id IS NOT NULL))
);
CREATE UNIQUE INDEX user_invitations_token ON user_invitations (token_hash);
-- One open invitation per e-mail (any case), across tenants as users_live_email is. An expired
-- one stays open until it is deleted or replaced (the invite path voids it first).
CREATE UNIQUE INDEX user_invitations_open_email ON user_invitations (lower(email)) WHERE accepted_at IS NULL AND deleted_at IS NULL;
-- The list, newest first, per partner (partner-level invitations), per organization, and overall.
CREATE INDEX user_invitations_partner ON user_invitations (partner_id, created_at, id) WHERE accepted_at IS NULL AND deleted_at IS NULL;
CREATE INDEX user_invitations_org ON user_invitations (org_id, created_at, id) WHERE accepted_at IS NULL AND deleted_at IS NULL;
CREATE INDEX user_invitations_open ON user_invitations (created_at, id) WHERE accepted_at IS NULL AND deleted_at IS NULL;

-- One-use reset tokens of a user; `used_at` also marks tokens voided by a newer request or a reset.
CREATE TABLE password_resets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id),
  token_hash text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  used_at timestamptz(3)
);
CREATE UNIQUE INDEX password_resets_token ON password_resets (token_hash);
CREATE INDEX password_resets_open_user ON password_resets (user_id) WHERE used_at IS NULL;
-- Housekeeping deletes tokens a day after they expired or were used.
CREATE INDEX password_resets_expires ON password_resets (expires_at);
CREATE INDEX password_resets_used ON password_resets (used_at) WHERE used_at IS NOT NULL;

-- "Forgot password" requests, counted per e-mail (known or not, so the limit tells nothing) and
-- per client address, like sign-in attempts; rows older than the window are pruned as they are met.
CREATE TABLE password_reset_requests (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email_key text NOT NULL,
  client_key text NOT NULL,
  requested_at timestamptz(3) NOT NULL
);
CREATE INDEX password_reset_requests_email ON password_reset_requests (email_key, requested_at);
CREATE INDEX password_reset_requests_client ON password_reset_requests (client_key, requested_at);
CREATE INDEX password_reset_requests_time ON password_reset_requests (requested_at);

-- The default privileges of 0001 grant all four; invitations are only ever soft-deleted (their
-- history is the audit's), request counts are only added and pruned.
GRANT SELECT, INSERT, UPDATE ON user_invitations TO dms_app;
REVOKE DELETE ON user_invitations FROM dms_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON password_resets TO dms_app;
GRANT SELECT, INSERT, DELETE ON password_reset_requests TO dms_app;
REVOKE UPDATE ON password_reset_requests FROM dms_app;

ALTER TABLE user_invitations ENABLE ROW LEVEL SECURITY;
ALTER TABLE user_invitations FORCE ROW LEVEL SECURITY;
CREATE POLICY user_invitations_tenant ON user_invitations
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND org_id IS NULL AND partner_id = (SELECT app_partner_id())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND org_id IS NULL AND partner_id = (SELECT app_partner_id())));

-- Reset tokens and request counts are the service's own bookkeeping: system scope only.
ALTER TABLE password_resets ENABLE ROW LEVEL SECURITY;
ALTER TABLE password_resets FORCE ROW LEVEL SECURITY;
CREATE POLICY password_resets_system ON password_resets
  USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');
ALTER TABLE password_reset_requests ENABLE ROW LEVEL SECURITY;
ALTER TABLE password_reset_requests FORCE ROW LEVEL SECURITY;
CREATE POLICY password_reset_requests_system ON password_reset_requests
  USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');
