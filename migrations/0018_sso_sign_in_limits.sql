-- Bounds on pending single sign-ons (API.md §10): POST /auth/sso/discover needs no credential and
-- stores a row per sign-in it starts, so the rows are counted per e-mail and per client address.
-- Rows of 0017 (none outside development) get empty keys and expire within 10 minutes.
ALTER TABLE sso_sign_ins ADD COLUMN email_key text NOT NULL DEFAULT '';
ALTER TABLE sso_sign_ins ADD COLUMN client_key text NOT NULL DEFAULT '';
CREATE INDEX sso_sign_ins_email ON sso_sign_ins (email_key, created_at);
CREATE INDEX sso_sign_ins_client ON sso_sign_ins (client_key, created_at);
