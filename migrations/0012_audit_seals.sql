-- Sealing is an insert (DESIGN.md §4). An audit row's place in its chain (seq, prev_checksum,
-- checksum) moves out of the wide row into audit_seals, one narrow row per sealed entry. Sealing
-- used to UPDATE each wide row once more, and as seq was indexed that update was never HOT: it
-- rewrote every index entry of the row, the trigram index's among them. Now the wide row
-- (audit_entries) is written once, by the change it records, and never again.
--
-- Pending entries are found through audit_pending, a queue that the entry's insert fills (a
-- trigger: no entry without its queue row, and no other writer) and that a seal empties (the
-- seal's trigger: a seal is accepted only for an entry pending in its chain, and takes it off the
-- queue). Rows commit in any order: one committed late is on the queue from its commit on, so the
-- sealer never misses it, and the queue stays as short as the backlog.
--
-- Seals and queue rows name their entry by its chain and insertion order (chain_id,
-- pending_order), not by its uuid: every index of the narrow tables, and the one added to the
-- entries, grows at its right edge (seq and pending_order only increase), where a random key (a
-- uuid, a checksum) costs a page of its own per row. Measured here: a 2,000-row batch of seals
-- took twice as long with a uuid key and a checksum index, and a chain's entries were looked up
-- four times faster by (chain_id, pending_order) than by uuid. So no index holds prev_checksum
-- either: the link rule below (a seal names the checksum of the row before it) refuses a fork,
-- where 0002's UNIQUE (chain_id, prev_checksum) only refused two rows claiming one predecessor.
--
-- audit_logs becomes a view of the entries with their seals: the shape and the name readers knew.

-- Read every row whoever the owner is (a non-superuser owner is subject to the forced policies).
SELECT set_config('app.scope', 'system', true);

CREATE TABLE audit_seals (
  org_id uuid,
  chain_id uuid GENERATED ALWAYS AS (coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED,
  seq bigint NOT NULL CHECK (seq >= 1),
  -- The entry sealed (audit_entries.pending_order).
  pending_order bigint NOT NULL,
  prev_checksum varchar(128),
  checksum varchar(128) NOT NULL,
  -- One seal per position (a fork is an error), and one per entry.
  CONSTRAINT audit_seals_chain_seq PRIMARY KEY (chain_id, seq),
  CONSTRAINT audit_seals_entry UNIQUE (pending_order),
  -- Only the first row has no predecessor.
  CONSTRAINT audit_seals_first_link CHECK ((seq = 1) = (prev_checksum IS NULL))
);

CREATE TABLE audit_pending (
  org_id uuid,
  chain_id uuid GENERATED ALWAYS AS (coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED,
  -- The entry waiting (audit_entries.pending_order), in the order the sealer follows.
  pending_order bigint NOT NULL,
  CONSTRAINT audit_pending_pkey PRIMARY KEY (chain_id, pending_order)
);

-- Sealed rows get their seals; pending rows stay pending.
INSERT INTO audit_seals (org_id, seq, pending_order, prev_checksum, checksum)
  SELECT org_id, seq, pending_order, prev_checksum, checksum FROM audit_logs WHERE seq IS NOT NULL;
INSERT INTO audit_pending (org_id, pending_order)
  SELECT org_id, pending_order FROM audit_logs WHERE seq IS NULL;

-- The wide row loses its chain columns (with their unique constraints and the pending index) and
-- everything that guarded them; its guards are recreated below.
DROP TRIGGER audit_logs_insert_pending ON audit_logs;
DROP TRIGGER audit_logs_no_update ON audit_logs;
DROP TRIGGER audit_logs_no_delete ON audit_logs;
DROP TRIGGER audit_logs_no_truncate ON audit_logs;
DROP TRIGGER audit_logs_delete_prefix_only ON audit_logs;
DROP FUNCTION audit_logs_refuse_sealed_insert(), audit_logs_append_only(), audit_logs_delete_prefix_only();
DROP FUNCTION audit_apply_seals(uuid[], bigint[], text[], text[]);
DROP POLICY audit_logs_seal ON audit_logs;
ALTER TABLE audit_logs DROP COLUMN seq, DROP COLUMN prev_checksum, DROP COLUMN checksum;
ALTER TABLE audit_logs RENAME TO audit_entries;
ALTER TABLE audit_entries RENAME CONSTRAINT audit_logs_pkey TO audit_entries_pkey;
ALTER TABLE audit_entries RENAME CONSTRAINT audit_logs_org_id_fkey TO audit_entries_org_id_fkey;
ALTER TABLE audit_entries RENAME CONSTRAINT audit_logs_actor_type_check TO audit_entries_actor_type_check;
ALTER TABLE audit_entries RENAME CONSTRAINT audit_logs_details_check TO audit_entries_details_check;
ALTER TABLE audit_entries RENAME CONSTRAINT audit_logs_result_check TO audit_entries_result_check;
ALTER INDEX audit_logs_org_time RENAME TO audit_entries_org_time;
ALTER INDEX audit_logs_time RENAME TO audit_entries_time;
ALTER INDEX audit_logs_search RENAME TO audit_entries_search;
ALTER SEQUENCE audit_logs_pending_order_seq RENAME TO audit_entries_pending_order_seq;
ALTER POLICY audit_logs_read ON audit_entries RENAME TO audit_entries_read;
ALTER POLICY audit_logs_append ON audit_entries RENAME TO audit_entries_append;
ALTER POLICY audit_logs_prune ON audit_entries RENAME TO audit_entries_prune;
-- How a seal or a queue row finds its entry, and a chain's entries in insertion order.
CREATE UNIQUE INDEX audit_entries_chain_order ON audit_entries (chain_id, pending_order);

-- Every entry is queued by its own insert. SECURITY DEFINER: no caller writes the queue itself.
-- Schema-qualified instead of a SET search_path clause, which would cost every audited change a
-- configuration save and restore.
CREATE FUNCTION audit_entries_enqueue() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  INSERT INTO public.audit_pending (org_id, pending_order) VALUES (NEW.org_id, NEW.pending_order);
  RETURN NULL;
END $$;
CREATE TRIGGER audit_entries_enqueue AFTER INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION audit_entries_enqueue();

-- Append-only, for everyone: entries and seals are never updated, the queue is never updated,
-- nothing is truncated.
CREATE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit log rows are append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_seals_no_update BEFORE UPDATE ON audit_seals FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_seals_no_truncate BEFORE TRUNCATE ON audit_seals FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_pending_no_update BEFORE UPDATE ON audit_pending FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_pending_no_truncate BEFORE TRUNCATE ON audit_pending FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();

-- The two exceptions, each a role of its own plus an explicit setting: the sealer appends seals,
-- retention deletes entries and seals (what it may delete is checked after each statement).
CREATE FUNCTION audit_sealer_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_user = 'dms_audit_sealer' AND coalesce(current_setting('app.audit_seal', true), '') = 'on' THEN
    RETURN NULL;
  END IF;
  RAISE EXCEPTION 'audit rows are sealed by the sealer only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE FUNCTION audit_retention_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_user = 'dms_audit_retention' AND coalesce(current_setting('app.audit_retention', true), '') = 'on' THEN
    RETURN NULL;
  END IF;
  RAISE EXCEPTION 'audit log rows are append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_seals_sealer_only BEFORE INSERT ON audit_seals FOR EACH STATEMENT EXECUTE FUNCTION audit_sealer_only();
CREATE TRIGGER audit_entries_retention_only BEFORE DELETE ON audit_entries FOR EACH STATEMENT EXECUTE FUNCTION audit_retention_only();
CREATE TRIGGER audit_seals_retention_only BEFORE DELETE ON audit_seals FOR EACH STATEMENT EXECUTE FUNCTION audit_retention_only();

-- An entry leaves the queue only by being sealed: the seals' trigger below deletes it, from
-- inside a trigger; a DELETE of its own is refused, the owner's included.
CREATE FUNCTION audit_pending_left_by_sealing() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() > 1 THEN
    RETURN NULL;
  END IF;
  RAISE EXCEPTION 'an audit entry leaves the pending queue only by being sealed' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_pending_no_delete BEFORE DELETE ON audit_pending FOR EACH STATEMENT EXECUTE FUNCTION audit_pending_left_by_sealing();

-- The checks below run as the owner with the system scope, so what they see does not depend on
-- the scope the caller set (a caller that narrowed its scope must not hide the rows checked).
-- Each takes the statement's rows a chain at a time, as arrays, and looks them up by index key
-- (chain_id plus pending_order or seq): never a join of the statement's rows to a table, which
-- PL/pgSQL plans once per session, for the size the rows had then (a first batch of one row
-- planned a scan of the whole queue per row, and kept it for batches of thousands).

-- A seal places an entry that is pending in the seal's own chain, once, right after the row before
-- it: each seal takes its entry off the queue, and names the checksum of the seal before it (or of
-- the anchor, when retention deleted that row). A seal without a queue row (an entry never queued,
-- sealed already, or of another chain) or without its link fails the whole statement. Once per
-- statement, on the new seals alone.
CREATE FUNCTION audit_seals_take_pending() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = public, pg_temp SET app.scope = 'system' AS $$
DECLARE
  c record;
  taken bigint[];
  anchor record;
  bad bigint;
BEGIN
  FOR c IN SELECT chain_id, array_agg(pending_order) AS orders, min(seq) AS lo, max(seq) AS hi FROM new_seals GROUP BY chain_id LOOP
    WITH gone AS (
      DELETE FROM audit_pending WHERE chain_id = c.chain_id AND pending_order = ANY (c.orders) RETURNING pending_order
    )
    SELECT array_agg(pending_order) INTO taken FROM gone;
    IF coalesce(cardinality(taken), 0) <> cardinality(c.orders) THEN
      SELECT o INTO bad FROM unnest(c.orders) o WHERE o <> ALL (coalesce(taken, '{}')) LIMIT 1;
      RAISE EXCEPTION 'audit entry % (pending_order) is not pending in this chain (%): an entry is sealed once, into its own chain', bad, c.chain_id
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT anchor_seq, anchor_checksum INTO anchor FROM audit_chain_anchors WHERE chain_id = c.chain_id;
    SELECT s.seq INTO bad
      FROM audit_seals s
      LEFT JOIN LATERAL (SELECT p.checksum FROM audit_seals p WHERE p.chain_id = c.chain_id AND p.seq = s.seq - 1 OFFSET 0) p ON true
     WHERE s.chain_id = c.chain_id AND s.seq BETWEEN c.lo AND c.hi AND s.seq > 1
       AND s.prev_checksum IS DISTINCT FROM coalesce(p.checksum, CASE WHEN anchor.anchor_seq = s.seq - 1 THEN anchor.anchor_checksum END)
     LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'audit seal % of chain % does not name the checksum of the row before it: a chain does not fork', bad, c.chain_id
        USING ERRCODE = 'check_violation';
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_seals_take_pending AFTER INSERT ON audit_seals REFERENCING NEW TABLE AS new_seals
  FOR EACH STATEMENT EXECUTE FUNCTION audit_seals_take_pending();

-- Retention deletes a prefix, entries first and then their seals, after moving the anchor in the
-- same transaction. An entry may go only while its seal says it lies at or below its chain's
-- anchor (a pending entry never goes)...
CREATE FUNCTION audit_entries_delete_anchored_only() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = public, pg_temp SET app.scope = 'system' AS $$
DECLARE
  c record;
  sealed bigint;
  top bigint;
  anchor bigint;
  pending uuid;
BEGIN
  FOR c IN SELECT chain_id, array_agg(pending_order) AS orders FROM deleted_entries GROUP BY chain_id LOOP
    SELECT count(*), max(seq) INTO sealed, top FROM audit_seals WHERE chain_id = c.chain_id AND pending_order = ANY (c.orders);
    IF sealed < cardinality(c.orders) THEN
      SELECT d.id INTO pending FROM deleted_entries d
       WHERE d.chain_id = c.chain_id
         AND NOT EXISTS (SELECT 1 FROM audit_seals s WHERE s.chain_id = c.chain_id AND s.pending_order = d.pending_order)
       LIMIT 1;
      RAISE EXCEPTION 'audit entry % is pending: retention deletes only sealed rows', pending USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT anchor_seq INTO anchor FROM audit_chain_anchors WHERE chain_id = c.chain_id;
    IF anchor IS NULL OR top > anchor THEN
      RAISE EXCEPTION 'audit row % of chain % is above the chain''s anchor %: retention deletes only what its anchor covers', top, c.chain_id, coalesce(anchor, 0)
        USING ERRCODE = 'insufficient_privilege';
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_entries_delete_anchored_only AFTER DELETE ON audit_entries REFERENCING OLD TABLE AS deleted_entries
  FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_delete_anchored_only();

-- ...and the seals deleted, per chain, lie at or below the anchor, form one run with no survivor
-- inside it, follow a row that is gone already, and leave no entry of theirs behind (an entry
-- without its seal would read as pending). Checked on the deleted rows alone, so the cost does
-- not grow with the chain's history.
CREATE FUNCTION audit_seals_delete_prefix_only() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = public, pg_temp SET app.scope = 'system' AS $$
DECLARE
  c record;
  anchor bigint;
  orphan bigint;
BEGIN
  FOR c IN SELECT chain_id, min(seq) AS lo, max(seq) AS hi, array_agg(pending_order) AS orders FROM deleted_seals GROUP BY chain_id LOOP
    SELECT anchor_seq INTO anchor FROM audit_chain_anchors WHERE chain_id = c.chain_id;
    IF anchor IS NULL OR c.hi > anchor THEN
      RAISE EXCEPTION 'audit row % of chain % is above the chain''s anchor %: retention deletes only what its anchor covers', c.hi, c.chain_id, coalesce(anchor, 0)
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF EXISTS (SELECT 1 FROM audit_seals WHERE chain_id = c.chain_id AND seq BETWEEN c.lo AND c.hi)
       OR EXISTS (SELECT 1 FROM audit_seals WHERE chain_id = c.chain_id AND seq = c.lo - 1) THEN
      RAISE EXCEPTION 'audit rows of chain % below seq % survive: retention deletes only a prefix of the chain', c.chain_id, c.hi
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT pending_order INTO orphan FROM audit_entries WHERE chain_id = c.chain_id AND pending_order = ANY (c.orders) LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'audit entry % (pending_order) of chain % would outlive its seal: retention deletes the entries, then their seals', orphan, c.chain_id
        USING ERRCODE = 'insufficient_privilege';
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_seals_delete_prefix_only AFTER DELETE ON audit_seals REFERENCING OLD TABLE AS deleted_seals
  FOR EACH STATEMENT EXECUTE FUNCTION audit_seals_delete_prefix_only();

-- 0009's anchor rules, now reading the seals: an anchor names a sealed row of its own chain, never
-- moves back nor changes chains, and by commit no seal at or below it survives.
CREATE OR REPLACE FUNCTION audit_chain_anchors_guard() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
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
  IF NOT EXISTS (SELECT 1 FROM audit_seals
                  WHERE chain_id = NEW.chain_id AND seq = NEW.anchor_seq AND checksum = NEW.anchor_checksum) THEN
    RAISE EXCEPTION 'an audit anchor names a sealed row of its chain (seq %, checksum %)', NEW.anchor_seq, NEW.anchor_checksum
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION audit_chain_anchors_prefix_gone() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = public, pg_temp SET app.scope = 'system' AS $$
DECLARE
  survivor bigint;
BEGIN
  SELECT seq INTO survivor FROM audit_seals
   WHERE chain_id = NEW.chain_id AND seq > (CASE WHEN TG_OP = 'UPDATE' THEN OLD.anchor_seq ELSE 0 END) AND seq <= NEW.anchor_seq
   ORDER BY seq LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'audit row % survives at or below its chain''s anchor %: retention deletes the whole prefix it anchors', survivor, NEW.anchor_seq
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

-- The log as readers knew it: each entry with its place in its chain (null while pending). A
-- seal counts only in its entry's own chain. Rows are inserted pending through it, as into the
-- table it was; the service itself inserts into audit_entries.
CREATE VIEW audit_logs WITH (security_invoker = true) AS
  SELECT e.id, e.org_id, e.chain_id, s.seq, e.timestamp, e.actor_type, e.actor_id, e.actor_email, e.action, e.resource_type,
         e.resource_id, e.resource_name, e.details, e.ip_address, e.user_agent, e.result, e.error_message,
         s.prev_checksum, s.checksum, e.pending_order
    FROM audit_entries e
    LEFT JOIN audit_seals s ON s.pending_order = e.pending_order AND s.chain_id = e.chain_id;
ALTER VIEW audit_logs ALTER COLUMN details SET DEFAULT '{}';

CREATE FUNCTION audit_logs_insert_pending() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS NOT NULL OR NEW.prev_checksum IS NOT NULL OR NEW.checksum IS NOT NULL THEN
    RAISE EXCEPTION 'audit rows are inserted pending: seq, prev_checksum and checksum are set by the sealer only'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  INSERT INTO public.audit_entries (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id,
                                    resource_name, details, ip_address, user_agent, result, error_message)
  VALUES (NEW.id, NEW.org_id, NEW.timestamp, NEW.actor_type, NEW.actor_id, NEW.actor_email, NEW.action, NEW.resource_type,
          NEW.resource_id, NEW.resource_name, NEW.details, NEW.ip_address, NEW.user_agent, NEW.result, NEW.error_message);
  RETURN NEW;
END $$;
CREATE TRIGGER audit_logs_insert_pending INSTEAD OF INSERT ON audit_logs FOR EACH ROW EXECUTE FUNCTION audit_logs_insert_pending();
-- Updates and deletes through the view are refused as the table refused them (privileges first:
-- only the owner gets this far). Retention deletes from the tables themselves.
CREATE TRIGGER audit_logs_no_update INSTEAD OF UPDATE ON audit_logs FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_logs_no_delete INSTEAD OF DELETE ON audit_logs FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();

-- Privileges. 0001's default privileges gave dms_app every write on the new relations: take them
-- back. The app reads, and appends entries without a place in the chain; the sealer reads and
-- appends seals; retention deletes entries and seals; nobody writes the queue but the triggers.
REVOKE ALL ON audit_seals, audit_pending, audit_logs FROM dms_app;
GRANT SELECT ON audit_seals, audit_pending, audit_logs TO dms_app;
GRANT INSERT (id, org_id, timestamp, actor_type, actor_id, actor_email, action, resource_type, resource_id, resource_name,
              details, ip_address, user_agent, result, error_message) ON audit_logs TO dms_app;
REVOKE UPDATE ON audit_entries FROM dms_audit_sealer;
GRANT SELECT ON audit_seals, audit_pending, audit_logs TO dms_audit_sealer;
GRANT INSERT (org_id, seq, pending_order, prev_checksum, checksum) ON audit_seals TO dms_audit_sealer;
GRANT SELECT, DELETE ON audit_seals TO dms_audit_retention;
GRANT SELECT ON audit_logs TO dms_audit_retention;

REVOKE EXECUTE ON FUNCTION audit_entries_enqueue(), audit_refuse_change(), audit_sealer_only(), audit_retention_only(),
  audit_pending_left_by_sealing(), audit_seals_take_pending(), audit_entries_delete_anchored_only(),
  audit_seals_delete_prefix_only(), audit_logs_insert_pending() FROM PUBLIC;

ALTER TABLE audit_seals ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_seals FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_seals_read ON audit_seals FOR SELECT
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));
CREATE POLICY audit_seals_seal ON audit_seals FOR INSERT WITH CHECK ((SELECT app_scope()) = 'system');
CREATE POLICY audit_seals_prune ON audit_seals FOR DELETE USING ((SELECT app_scope()) = 'system');

ALTER TABLE audit_pending ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_pending FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_pending_read ON audit_pending FOR SELECT
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));
-- The queue row is written in the entry's insert, under its caller's scope: the entry's own rule.
CREATE POLICY audit_pending_enqueue ON audit_pending FOR INSERT
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IS NULL OR org_id IN (SELECT unnest(app_org_ids())));
CREATE POLICY audit_pending_take ON audit_pending FOR DELETE USING ((SELECT app_scope()) = 'system');
