-- Least privilege (DESIGN.md §3-§4). The service no longer logs in as the schema owner and switches
-- roles (RESET ROLE would hand a request the owner): requests log in as dms_app, the sealer as
-- dms_audit_sealer, the retention worker as dms_audit_retention, none a member of any other role.
-- The tables the app only reads lose the writes 0001's default privileges gave it, and the chain's
-- rules move into the database: rows are inserted pending, retention deletes only the prefix its
-- anchor covers, and an anchor names a real sealed row. The platform chain gets a retention policy.

-- Roles are cluster-wide: another database's migration may have done this already, or be doing it
-- now ("tuple concurrently updated"), which is fine as long as the role ends up able to log in.
DO $$
DECLARE
  r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['dms_app', 'dms_audit_sealer', 'dms_audit_retention'] LOOP
    IF NOT (SELECT rolcanlogin FROM pg_roles WHERE rolname = r) THEN
      BEGIN
        EXECUTE format('ALTER ROLE %I LOGIN', r);
      EXCEPTION WHEN OTHERS THEN
        IF NOT (SELECT rolcanlogin FROM pg_roles WHERE rolname = r) THEN
          RAISE;
        END IF;
      END;
    END IF;
  END LOOP;
END $$;

-- 0001 and 0002 made a non-superuser owner a member so it could switch roles; nothing switches now.
DO $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('REVOKE dms_app, dms_audit_sealer, dms_audit_retention FROM %I', current_user);
  END IF;
END $$;

-- The platform chain's policy: keyed by chain like the log itself (org_id null: the platform).
ALTER TABLE audit_retention_policies DROP CONSTRAINT audit_retention_policies_pkey;
ALTER TABLE audit_retention_policies ALTER COLUMN org_id DROP NOT NULL;
ALTER TABLE audit_retention_policies
  ADD COLUMN chain_id uuid GENERATED ALWAYS AS (coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED;
ALTER TABLE audit_retention_policies ADD CONSTRAINT audit_retention_policies_pkey PRIMARY KEY (chain_id);

-- The app appends pending rows and reads; the chain's bookkeeping is the sealer's and retention's.
REVOKE INSERT, UPDATE, DELETE ON audit_chains, audit_chain_anchors, audit_checkpoints, audit_retention_policies FROM dms_app;
GRANT SELECT ON audit_chains, audit_chain_anchors, audit_checkpoints, audit_retention_policies TO dms_app;
-- PUT /audit-logs/retention writes the policy; lastCleanupAt is the retention worker's.
GRANT INSERT (org_id, retention_days, archive_to_object_store), UPDATE (retention_days, archive_to_object_store, updated_at)
  ON audit_retention_policies TO dms_app;
REVOKE INSERT ON audit_logs FROM dms_app;
GRANT INSERT (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id, resource_name,
              details, ip_address, user_agent, result, error_message) ON audit_logs TO dms_app;

-- The sealer moves chain heads; it never reads or writes anchors.
REVOKE INSERT, UPDATE ON audit_chains FROM dms_audit_sealer;
GRANT INSERT (chain_id, org_id), UPDATE (last_seq, last_checksum) ON audit_chains TO dms_audit_sealer;
REVOKE SELECT ON audit_chain_anchors FROM dms_audit_sealer;
-- Retention moves anchors and records its cleanups; chain heads are the sealer's.
REVOKE INSERT, UPDATE ON audit_chains FROM dms_audit_retention;
REVOKE UPDATE ON audit_chain_anchors FROM dms_audit_retention;
GRANT UPDATE (anchor_seq, anchor_checksum) ON audit_chain_anchors TO dms_audit_retention;
REVOKE UPDATE ON audit_retention_policies FROM dms_audit_retention;
GRANT INSERT (org_id, last_cleanup_at), UPDATE (last_cleanup_at) ON audit_retention_policies TO dms_audit_retention;

-- A row is inserted pending: a row arriving with its chain columns set would claim a place the
-- sealer then cannot fill (a unique violation on every later batch of that chain). Only rows
-- that break the rule reach the function, so the ordinary insert pays for no PL/pgSQL call.
CREATE FUNCTION audit_logs_refuse_sealed_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit rows are inserted pending: seq, prev_checksum and checksum are set by the sealer only'
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_logs_insert_pending BEFORE INSERT ON audit_logs FOR EACH ROW
  WHEN (NEW.seq IS NOT NULL OR NEW.prev_checksum IS NOT NULL OR NEW.checksum IS NOT NULL)
  EXECUTE FUNCTION audit_logs_refuse_sealed_insert();

-- The checks below run as the owner with the system scope, so what they see does not depend on
-- the scope the caller set (a caller that narrowed its scope must not hide the rows checked).

-- An anchor names a sealed row of its own chain, never moves back, and never changes chains.
CREATE FUNCTION audit_chain_anchors_guard() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = public, pg_temp SET app.scope = 'system' AS $$
BEGIN
  IF NEW.chain_id IS DISTINCT FROM coalesce(NEW.org_id, '00000000-0000-0000-0000-000000000000'::uuid) THEN
    RAISE EXCEPTION 'an audit anchor belongs to its organization''s chain' USING ERRCODE = 'check_violation';
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF NEW.chain_id <> OLD.chain_id THEN
      RAISE EXCEPTION 'an audit anchor never changes chains' USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.anchor_seq < OLD.anchor_seq THEN
      RAISE EXCEPTION 'an audit anchor only moves forward (from % to %)', OLD.anchor_seq, NEW.anchor_seq USING ERRCODE = 'check_violation';
    END IF;
    IF (NEW.anchor_seq, NEW.anchor_checksum) = (OLD.anchor_seq, OLD.anchor_checksum) THEN
      RETURN NEW;
    END IF;
  END IF;
  IF TG_OP = 'INSERT' AND NEW.anchor_seq = 0 AND NEW.anchor_checksum = '' THEN
    RETURN NEW; -- nothing deleted yet
  END IF;
  IF NOT EXISTS (SELECT 1 FROM audit_logs
                  WHERE chain_id = NEW.chain_id AND seq = NEW.anchor_seq AND checksum = NEW.anchor_checksum) THEN
    RAISE EXCEPTION 'an audit anchor names a sealed row of its chain (seq %, checksum %)', NEW.anchor_seq, NEW.anchor_checksum
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_chain_anchors_guard BEFORE INSERT OR UPDATE ON audit_chain_anchors
  FOR EACH ROW EXECUTE FUNCTION audit_chain_anchors_guard();

-- By commit, nothing the anchor covers survives: moving it past rows that still exist would hide
-- them from /verify. Only the newly covered range is read: what the old anchor covered was
-- checked when it moved there (and a surviving row below it is a break /verify reports).
CREATE FUNCTION audit_chain_anchors_prefix_gone() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = public, pg_temp SET app.scope = 'system' AS $$
DECLARE
  survivor bigint;
BEGIN
  SELECT seq INTO survivor FROM audit_logs
   WHERE chain_id = NEW.chain_id AND seq > (CASE WHEN TG_OP = 'UPDATE' THEN OLD.anchor_seq ELSE 0 END) AND seq <= NEW.anchor_seq
   ORDER BY seq LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'audit row % survives at or below its chain''s anchor %: retention deletes the whole prefix it anchors', survivor, NEW.anchor_seq
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER audit_chain_anchors_prefix_gone AFTER INSERT OR UPDATE ON audit_chain_anchors
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_chain_anchors_prefix_gone();

-- Retention deletes a prefix: per chain, the rows a DELETE removed lie at or below the chain's
-- anchor (moved first, in the same transaction), form one run with no survivor inside it, and the
-- row before the run is gone already. Checked once per statement, on the deleted rows alone, so
-- the cost does not grow with the chain's history.
CREATE FUNCTION audit_logs_delete_prefix_only() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = public, pg_temp SET app.scope = 'system' AS $$
DECLARE
  bad record;
BEGIN
  FOR bad IN
    SELECT d.chain_id, d.lo, d.hi, a.anchor_seq
      FROM (SELECT chain_id, min(seq) AS lo, max(seq) AS hi FROM deleted_rows GROUP BY chain_id) d
      LEFT JOIN audit_chain_anchors a ON a.chain_id = d.chain_id
  LOOP
    IF bad.anchor_seq IS NULL OR bad.hi > bad.anchor_seq THEN
      RAISE EXCEPTION 'audit row % of chain % is above the chain''s anchor %: retention deletes only what its anchor covers', bad.hi, bad.chain_id, coalesce(bad.anchor_seq, 0)
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF EXISTS (SELECT 1 FROM audit_logs WHERE chain_id = bad.chain_id AND seq BETWEEN bad.lo AND bad.hi)
       OR EXISTS (SELECT 1 FROM audit_logs WHERE chain_id = bad.chain_id AND seq = bad.lo - 1) THEN
      RAISE EXCEPTION 'audit rows of chain % below seq % survive: retention deletes only a prefix of the chain', bad.chain_id, bad.hi
        USING ERRCODE = 'insufficient_privilege';
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_logs_delete_prefix_only AFTER DELETE ON audit_logs REFERENCING OLD TABLE AS deleted_rows
  FOR EACH STATEMENT EXECUTE FUNCTION audit_logs_delete_prefix_only();

REVOKE EXECUTE ON FUNCTION audit_logs_refuse_sealed_insert(), audit_chain_anchors_guard(), audit_chain_anchors_prefix_gone(),
  audit_logs_delete_prefix_only() FROM PUBLIC;
