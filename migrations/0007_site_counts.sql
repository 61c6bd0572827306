-- Sites per organization, kept by a trigger in the transaction that adds or removes a site, so a
-- site list's total is a sum over the caller's organizations instead of a count over every site
-- they reach (a partner with 10,000 sites paid for a 10,000-row count on each page).

CREATE TABLE organization_site_counts (
  org_id uuid PRIMARY KEY REFERENCES organizations (id),
  sites integer NOT NULL CHECK (sites >= 0)
);
GRANT SELECT, INSERT, UPDATE ON organization_site_counts TO dms_app;
ALTER TABLE organization_site_counts ENABLE ROW LEVEL SECURITY;
ALTER TABLE organization_site_counts FORCE ROW LEVEL SECURITY;
CREATE POLICY organization_site_counts_tenant ON organization_site_counts
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));

CREATE FUNCTION count_sites() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE organization_site_counts SET sites = sites - 1 WHERE org_id = OLD.org_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO organization_site_counts AS c (org_id, sites) VALUES (NEW.org_id, 1)
      ON CONFLICT (org_id) DO UPDATE SET sites = c.sites + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER sites_count AFTER INSERT OR DELETE OR UPDATE OF org_id ON sites
  FOR EACH ROW EXECUTE FUNCTION count_sites();

INSERT INTO organization_site_counts (org_id, sites) SELECT org_id, count(*) FROM sites GROUP BY org_id;
