-- API keys (SPEC "API key"): only the SHA-256 of the key is kept, uniquely indexed, and never
-- selected into a response. `version` grows with every change (update, rotate, revoke, expiry) so
-- that other instances can tell their cached copy is stale (see api-keys/key-cache.ts).
CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id),
  name varchar(255) NOT NULL CHECK (length(name) >= 1),
  key_hash text NOT NULL CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  key_prefix varchar(12) NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz(3),
  rate_limit integer NOT NULL DEFAULT 1000 CHECK (rate_limit BETWEEN 1 AND 100000),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'expired', 'revoked')),
  version integer NOT NULL DEFAULT 1,
  -- The creating user; no foreign key, so the record outlives the user.
  created_by uuid,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  last_used_at timestamptz(3),
  usage_count bigint NOT NULL DEFAULT 0 CHECK (usage_count >= 0)
);
CREATE UNIQUE INDEX api_keys_key_hash ON api_keys (key_hash);
CREATE INDEX api_keys_org ON api_keys (org_id, created_at DESC, id DESC);
CREATE INDEX api_keys_created ON api_keys (created_at DESC, id DESC);
CREATE TRIGGER api_keys_updated_at BEFORE UPDATE OF name, scopes, rate_limit, status, key_hash, expires_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION set_updated_at();

GRANT SELECT, INSERT, UPDATE ON api_keys TO dms_app;

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY api_keys_tenant ON api_keys
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));
