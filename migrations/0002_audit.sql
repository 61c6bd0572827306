-- The audit log: append-only, one SHA-256 hash chain per organization plus a platform chain
-- (org_id null). Rows are inserted "pending" (seq, prev_checksum, checksum null) in the
-- transaction of the change they record; the sealer then chains them in batches (DESIGN.md §4).

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The two privileged paths, each a role of its own plus an explicit session setting.
DO $$
BEGIN
  CREATE ROLE dms_audit_sealer NOLOGIN NOSUPERUSER NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
  CREATE ROLE dms_audit_retention NOLOGIN NOSUPERUSER NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE 'GRANT dms_audit_sealer, dms_audit_retention TO ' || quote_ident(current_user);
  END IF;
END $$;

CREATE TABLE audit_logs (
  id uuid PRIMARY KEY,
  org_id uuid REFERENCES organizations (id),
  -- The chain a row belongs to: its organization, or the zero UUID for the platform chain.
  chain_id uuid GENERATED ALWAYS AS (coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED,
  seq bigint,
  timestamp timestamptz(3) NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'agent', 'system')),
  actor_id uuid,
  actor_email varchar(255),
  action varchar(100) NOT NULL,
  resource_type varchar(50),
  resource_id uuid,
  resource_name varchar(255),
  details jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
  ip_address varchar(45),
  user_agent text,
  result text NOT NULL CHECK (result IN ('success', 'failure', 'denied')),
  error_message text,
  prev_checksum varchar(128),
  checksum varchar(128),
  -- Insertion order, for the sealer; not part of the chain.
  pending_order bigint GENERATED ALWAYS AS IDENTITY,
  CONSTRAINT audit_logs_sealed_shape CHECK ((seq IS NULL) = (checksum IS NULL) AND (seq IS NOT NULL OR prev_checksum IS NULL)),
  CONSTRAINT audit_logs_first_link CHECK (seq IS NULL OR seq > 1 OR prev_checksum IS NULL),
  -- One row per position, and no two rows claiming the same predecessor: a fork is an error.
  CONSTRAINT audit_logs_chain_seq UNIQUE (chain_id, seq),
  CONSTRAINT audit_logs_chain_link UNIQUE (chain_id, prev_checksum)
);

CREATE INDEX audit_logs_pending ON audit_logs (chain_id, pending_order) WHERE seq IS NULL;
CREATE INDEX audit_logs_org_time ON audit_logs (org_id, timestamp DESC, id DESC);
CREATE INDEX audit_logs_time ON audit_logs (timestamp DESC, id DESC);
-- Free-text search over what `q` matches (SPEC: action, actor e-mail, resource type and name, details).
CREATE FUNCTION audit_search_text(action text, actor_email text, resource_type text, resource_name text, details jsonb)
  RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT lower(coalesce(action, '') || E'\n' || coalesce(actor_email, '') || E'\n' || coalesce(resource_type, '')
                     || E'\n' || coalesce(resource_name, '') || E'\n' || details::text) $$;
CREATE INDEX audit_logs_search ON audit_logs
  USING gin (audit_search_text(action, actor_email, resource_type, resource_name, details) gin_trgm_ops);
-- The other text filters (user, action, resource) run inside one organization's rows, found through
-- audit_logs_org_time; more trigram indexes would tax every insert and every seal for little.

-- Per-chain head and retention anchor, kept by the sealer (and later the retention worker).
CREATE TABLE audit_chains (
  chain_id uuid PRIMARY KEY,
  org_id uuid REFERENCES organizations (id),
  last_seq bigint NOT NULL DEFAULT 0,
  last_checksum varchar(128),
  anchor_seq bigint,
  anchor_checksum varchar(128)
);

-- The sealer's write: each row by primary key, so the plan never depends on statistics (a join
-- against unnest() was planned as 25,000 x 2,000 comparisons on a freshly grown table under RLS).
-- Runs as the caller (the sealer role), so the trigger and the policies still apply.
CREATE FUNCTION audit_apply_seals(ids uuid[], seqs bigint[], prevs text[], sums text[]) RETURNS integer
  LANGUAGE plpgsql SECURITY INVOKER AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
    UPDATE audit_logs SET seq = seqs[i], prev_checksum = prevs[i], checksum = sums[i] WHERE id = ids[i] AND seq IS NULL;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'audit row % is not pending', ids[i];
    END IF;
  END LOOP;
  RETURN coalesce(array_length(ids, 1), 0);
END $$;

-- Append-only: UPDATE, DELETE and TRUNCATE are refused, except for the two paths above.
CREATE FUNCTION audit_logs_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF current_user = 'dms_audit_sealer'
       AND coalesce(current_setting('app.audit_seal', true), '') = 'on'
       AND OLD.seq IS NULL AND NEW.seq IS NOT NULL
       AND (NEW.id, NEW.org_id, NEW.timestamp, NEW.actor_type, NEW.actor_id, NEW.actor_email, NEW.action, NEW.resource_type,
            NEW.resource_id, NEW.resource_name, NEW.details, NEW.ip_address, NEW.user_agent, NEW.result, NEW.error_message,
            NEW.pending_order)
           IS NOT DISTINCT FROM
           (OLD.id, OLD.org_id, OLD.timestamp, OLD.actor_type, OLD.actor_id, OLD.actor_email, OLD.action, OLD.resource_type,
            OLD.resource_id, OLD.resource_name, OLD.details, OLD.ip_address, OLD.user_agent, OLD.result, OLD.error_message,
            OLD.pending_order) THEN
      RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit log rows are append-only' USING ERRCODE = 'insufficient_privilege';
  ELSIF TG_OP = 'DELETE' THEN
    IF current_user = 'dms_audit_retention'
       AND coalesce(current_setting('app.audit_retention', true), '') = 'on'
       AND OLD.seq IS NOT NULL THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit log rows are append-only' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RAISE EXCEPTION 'audit log rows are append-only' USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER audit_logs_no_update BEFORE UPDATE ON audit_logs FOR EACH ROW EXECUTE FUNCTION audit_logs_append_only();
CREATE TRIGGER audit_logs_no_delete BEFORE DELETE ON audit_logs FOR EACH ROW EXECUTE FUNCTION audit_logs_append_only();
CREATE TRIGGER audit_logs_no_truncate BEFORE TRUNCATE ON audit_logs FOR EACH STATEMENT EXECUTE FUNCTION audit_logs_append_only();

-- Default privileges gave dms_app everything: take back all but reading and appending.
REVOKE UPDATE, DELETE, TRUNCATE ON audit_logs FROM dms_app;
GRANT SELECT, INSERT ON audit_logs TO dms_app;
GRANT SELECT, UPDATE (seq, prev_checksum, checksum) ON audit_logs TO dms_audit_sealer;
GRANT SELECT, DELETE ON audit_logs TO dms_audit_retention;
GRANT SELECT ON audit_chains TO dms_app;
GRANT SELECT, INSERT, UPDATE ON audit_chains TO dms_audit_sealer, dms_audit_retention;
GRANT USAGE ON SCHEMA public TO dms_audit_sealer, dms_audit_retention;

ALTER TABLE audit_logs ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_logs FORCE ROW LEVEL SECURITY;
-- Tenants read their organizations' chains; the platform chain is for system scope only.
CREATE POLICY audit_logs_read ON audit_logs FOR SELECT
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));
-- Any caller may append to a chain it reaches, or to the platform chain (events with no organization).
CREATE POLICY audit_logs_append ON audit_logs FOR INSERT
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IS NULL OR org_id IN (SELECT unnest(app_org_ids())));
CREATE POLICY audit_logs_seal ON audit_logs FOR UPDATE USING ((SELECT app_scope()) = 'system') WITH CHECK ((SELECT app_scope()) = 'system');
CREATE POLICY audit_logs_prune ON audit_logs FOR DELETE USING ((SELECT app_scope()) = 'system');

ALTER TABLE audit_chains ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_chains FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_chains_tenant ON audit_chains
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system');
