-- Audit retention policies (SPEC "Audit retention policy") and signed checkpoints (issue 9).

CREATE TABLE audit_retention_policies (
  org_id uuid PRIMARY KEY REFERENCES organizations (id),
  retention_days integer NOT NULL DEFAULT 365 CHECK (retention_days BETWEEN 1 AND 3650),
  archive_to_object_store boolean NOT NULL DEFAULT false,
  last_cleanup_at timestamptz(3),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
GRANT SELECT, INSERT, UPDATE ON audit_retention_policies TO dms_app;
GRANT SELECT, UPDATE ON audit_retention_policies TO dms_audit_retention;
ALTER TABLE audit_retention_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_retention_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_retention_policies_tenant ON audit_retention_policies
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));

-- A signed statement "chain X had checksum C at seq S": written by the sealer every N rows or T
-- minutes per chain, and for every retention anchor. Append-only like the log itself.
CREATE TABLE audit_checkpoints (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id uuid REFERENCES organizations (id),
  chain_id uuid GENERATED ALWAYS AS (coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED,
  seq bigint NOT NULL CHECK (seq >= 1),
  checksum varchar(128) NOT NULL,
  timestamp timestamptz(3) NOT NULL,
  key_id text NOT NULL,
  signature text NOT NULL,
  kind text NOT NULL DEFAULT 'periodic' CHECK (kind IN ('periodic', 'anchor')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT audit_checkpoints_chain_seq UNIQUE (chain_id, seq)
);
CREATE INDEX audit_checkpoints_org ON audit_checkpoints (org_id, seq DESC);
GRANT SELECT ON audit_checkpoints TO dms_app;
GRANT SELECT, INSERT ON audit_checkpoints TO dms_audit_sealer, dms_audit_retention;
ALTER TABLE audit_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_checkpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_checkpoints_tenant ON audit_checkpoints
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));

-- A chain's retention anchor lives apart from its head: the retention worker locks this row, the
-- sealer locks audit_chains, so deleting an expired prefix never waits for sealing or blocks it.
-- (audit_chains.anchor_seq/anchor_checksum from 0002 are unused.)
CREATE TABLE audit_chain_anchors (
  chain_id uuid PRIMARY KEY,
  org_id uuid REFERENCES organizations (id),
  anchor_seq bigint NOT NULL,
  anchor_checksum varchar(128) NOT NULL
);
GRANT SELECT ON audit_chain_anchors TO dms_app, dms_audit_sealer;
GRANT SELECT, INSERT, UPDATE ON audit_chain_anchors TO dms_audit_retention;
ALTER TABLE audit_chain_anchors ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_chain_anchors FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_chain_anchors_tenant ON audit_chain_anchors
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system');

-- The sealer's write again, matching on the primary key alone: with `AND seq IS NULL` the planner
-- could pick the partial pending index (when statistics said it was nearly empty) and scan all of
-- it for every row, which took a minute per 2,000-row batch once 50,000 rows were pending. A row
-- that is already sealed is still refused: the append-only trigger lets the sealer fill the chain
-- columns only while they are null.
CREATE OR REPLACE FUNCTION audit_apply_seals(ids uuid[], seqs bigint[], prevs text[], sums text[]) RETURNS integer
  LANGUAGE plpgsql SECURITY INVOKER AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
    UPDATE audit_logs SET seq = seqs[i], prev_checksum = prevs[i], checksum = sums[i] WHERE id = ids[i];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'audit row % does not exist', ids[i];
    END IF;
  END LOOP;
  RETURN coalesce(array_length(ids, 1), 0);
END $$;
