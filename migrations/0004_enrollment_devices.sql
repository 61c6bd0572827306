-- Enrollment keys and devices (SPEC "Enrollment key", API.md §5-6). Keys are stored as
-- HMAC-SHA-256 with the server pepper (a changed pepper invalidates them); agent tokens as SHA-256.
CREATE TABLE enrollment_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id),
  site_id uuid REFERENCES sites (id) ON DELETE SET NULL,
  name varchar(255) NOT NULL CHECK (length(name) >= 1),
  key_hash text NOT NULL CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  usage_count integer NOT NULL DEFAULT 0 CHECK (usage_count >= 0),
  max_usage integer CHECK (max_usage BETWEEN 1 AND 100000),
  expires_at timestamptz(3) NOT NULL,
  created_by uuid,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX enrollment_keys_key_hash ON enrollment_keys (key_hash);
CREATE INDEX enrollment_keys_org ON enrollment_keys (org_id, created_at DESC, id DESC);
CREATE INDEX enrollment_keys_created ON enrollment_keys (created_at DESC, id DESC);
CREATE TRIGGER enrollment_keys_updated_at BEFORE UPDATE OF name, key_hash, max_usage, expires_at ON enrollment_keys
  FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE devices (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id),
  site_id uuid NOT NULL REFERENCES sites (id),
  agent_id char(64) NOT NULL CHECK (agent_id ~ '^[0-9a-f]{64}$'),
  auth_token_hash text NOT NULL CHECK (auth_token_hash ~ '^[0-9a-f]{64}$'),
  hostname varchar(255) NOT NULL,
  os_type text NOT NULL CHECK (os_type IN ('windows', 'macos', 'linux')),
  os_version varchar(100) NOT NULL,
  architecture varchar(50) NOT NULL,
  agent_version varchar(50) NOT NULL,
  last_seen_at timestamptz(3),
  last_source_ip varchar(45),
  enrolled_at timestamptz(3) NOT NULL DEFAULT now(),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  -- DELETE decommissions: the row stays for the audit trail, the agent's token stops working.
  decommissioned_at timestamptz(3)
);
CREATE UNIQUE INDEX devices_agent_id ON devices (agent_id);
CREATE INDEX devices_org ON devices (org_id, created_at DESC, id DESC) WHERE decommissioned_at IS NULL;
CREATE INDEX devices_site ON devices (site_id) WHERE decommissioned_at IS NULL;
CREATE INDEX devices_created ON devices (created_at DESC, id DESC) WHERE decommissioned_at IS NULL;
CREATE TRIGGER devices_updated_at BEFORE UPDATE OF site_id, hostname, os_type, os_version, architecture, agent_version, decommissioned_at ON devices
  FOR EACH ROW EXECUTE FUNCTION set_updated_at();

GRANT SELECT, INSERT, UPDATE, DELETE ON enrollment_keys TO dms_app;
GRANT SELECT, INSERT, UPDATE ON devices TO dms_app;

ALTER TABLE enrollment_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE enrollment_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY enrollment_keys_tenant ON enrollment_keys
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));

ALTER TABLE devices ENABLE ROW LEVEL SECURITY;
ALTER TABLE devices FORCE ROW LEVEL SECURITY;
CREATE POLICY devices_tenant ON devices
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));
