-- API-key usage counted in Redis (with REDIS_URL): each instance moves the counts to api_keys in
-- batches taken whole from Redis. A batch id is recorded in the same transaction as its counts, so
-- a batch retried after a crash (by its instance or another) is added once (usage exact across a
-- SIGKILL). Pruned after a day by housekeeping; batches are retried within a minute.
CREATE TABLE api_key_usage_batches (
  id text PRIMARY KEY,
  applied_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX api_key_usage_batches_applied ON api_key_usage_batches (applied_at);

GRANT SELECT, INSERT, DELETE ON api_key_usage_batches TO dms_app;
REVOKE UPDATE ON api_key_usage_batches FROM dms_app;

ALTER TABLE api_key_usage_batches ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_key_usage_batches FORCE ROW LEVEL SECURITY;
CREATE POLICY api_key_usage_batches_system ON api_key_usage_batches
  USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');

-- Names this database's keys in a Redis that other deployments (or test databases) may share:
-- usage counted there for one database must never be added to another's keys.
CREATE TABLE deployment_identity (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  singleton boolean NOT NULL DEFAULT true UNIQUE CHECK (singleton)
);
INSERT INTO deployment_identity DEFAULT VALUES;
GRANT SELECT ON deployment_identity TO dms_app;
REVOKE INSERT, UPDATE, DELETE ON deployment_identity FROM dms_app;
ALTER TABLE deployment_identity ENABLE ROW LEVEL SECURITY;
ALTER TABLE deployment_identity FORCE ROW LEVEL SECURITY;
CREATE POLICY deployment_identity_system ON deployment_identity
  USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');
