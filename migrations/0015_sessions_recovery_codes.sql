-- Identity beyond passwords, part one (API.md §10): what the session list shows, MFA recovery
-- codes, and users without a password (provisioned by single sign-on, or invited and not yet in).

-- When the session last issued tokens (sign-in or refresh): a live client refreshes every 15
-- minutes, so this is accurate to that without a write on every request.
ALTER TABLE sessions ADD COLUMN last_used_at timestamptz(3);
UPDATE sessions SET last_used_at = created_at;
ALTER TABLE sessions ALTER COLUMN last_used_at SET NOT NULL;
ALTER TABLE sessions ALTER COLUMN last_used_at SET DEFAULT now();
-- Signed in through the tenant's identity provider rather than with a password.
ALTER TABLE sessions ADD COLUMN sso boolean NOT NULL DEFAULT false;

-- A user made by just-in-time provisioning signs in only through its identity provider.
ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL;

-- Ten one-use codes per user, SHA-256 of a high-entropy code (so a fast hash suffices); a new set
-- replaces the old one.
CREATE TABLE mfa_recovery_codes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id),
  code_hash text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  used_at timestamptz(3)
);
CREATE INDEX mfa_recovery_codes_user ON mfa_recovery_codes (user_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON mfa_recovery_codes TO dms_app;
ALTER TABLE mfa_recovery_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE mfa_recovery_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY mfa_recovery_codes_system ON mfa_recovery_codes
  USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');

-- An administrator can disable a user without deleting it (its history and grants stay): a
-- disabled user cannot sign in by any means, and its sessions end when it is disabled.
ALTER TABLE users ADD COLUMN disabled_at timestamptz(3);
