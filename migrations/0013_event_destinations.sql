-- Outbound event delivery (API.md §9): destinations, a cursor per destination and chain, and the
-- delivery log. A destination covers one organization (org_id), every organization of a partner
-- (partner_id), or, with neither, every chain of the platform.

CREATE TABLE event_destinations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  partner_id uuid REFERENCES partners (id) ON DELETE CASCADE,
  name varchar(255) NOT NULL,
  kind text NOT NULL CHECK (kind IN ('webhook', 'syslog')),
  url varchar(2048) NOT NULL,
  filter_actions text[] NOT NULL DEFAULT '{}',
  filter_results text[] NOT NULL DEFAULT '{}',
  ca_certificate text,
  enabled boolean NOT NULL DEFAULT true,
  -- Webhook signing secrets, sealed (AES-256-GCM, like TOTP seeds); the previous one signs too
  -- until previous_secret_until (24 h after a rotation).
  secret_sealed text,
  previous_secret_sealed text,
  previous_secret_until timestamptz,
  failing boolean NOT NULL DEFAULT false,
  last_success_at timestamptz,
  last_failure_at timestamptz,
  last_error varchar(1024),
  -- One sender per destination across instances: whoever holds an unexpired lease.
  lease_owner text,
  lease_until timestamptz,
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT event_destinations_one_owner CHECK (org_id IS NULL OR partner_id IS NULL),
  CONSTRAINT event_destinations_secret CHECK ((kind = 'webhook') = (secret_sealed IS NOT NULL))
) WITH (fillfactor = 80);
CREATE INDEX event_destinations_org ON event_destinations (org_id, created_at DESC, id DESC) WHERE org_id IS NOT NULL;
CREATE INDEX event_destinations_partner ON event_destinations (partner_id, created_at DESC, id DESC) WHERE partner_id IS NOT NULL;
CREATE INDEX event_destinations_created ON event_destinations (created_at DESC, id DESC);

-- Where a destination stands in a chain: every entry up to last_seq was delivered (or filtered
-- out). A failed entry keeps last_seq below it and sets the retry time; later entries wait.
CREATE TABLE event_destination_cursors (
  destination_id uuid NOT NULL REFERENCES event_destinations (id) ON DELETE CASCADE,
  chain_id uuid NOT NULL,
  org_id uuid,
  last_seq bigint NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  failing_since timestamptz,
  -- Bumped by a replay's rewind: a sender that read the cursor before it does not move it after.
  generation integer NOT NULL DEFAULT 0,
  PRIMARY KEY (destination_id, chain_id)
) WITH (fillfactor = 70);

CREATE TABLE event_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  destination_id uuid NOT NULL REFERENCES event_destinations (id) ON DELETE CASCADE,
  entry_id uuid,
  org_id uuid,
  seq bigint,
  action text NOT NULL,
  attempt integer NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed')),
  response_status integer,
  error varchar(1024),
  duration_ms integer NOT NULL,
  -- clock_timestamp: the attempts of one batch keep their order.
  attempted_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX event_deliveries_destination ON event_deliveries (destination_id, attempted_at DESC, id DESC);
CREATE INDEX event_deliveries_time ON event_deliveries (attempted_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON event_destinations, event_destination_cursors, event_deliveries TO dms_app;

-- Organization destinations follow their organization's reach; partner-wide ones need the whole
-- partner (access to all its organizations); platform-wide ones, system scope. Cursors and
-- deliveries follow their destination.
ALTER TABLE event_destinations ENABLE ROW LEVEL SECURITY;
ALTER TABLE event_destinations FORCE ROW LEVEL SECURITY;
CREATE POLICY event_destinations_tenant ON event_destinations
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND (SELECT app_partner_all()) AND partner_id = (SELECT app_partner_id())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids()))
         OR ((SELECT app_scope()) = 'partner' AND (SELECT app_partner_all()) AND partner_id = (SELECT app_partner_id())));

ALTER TABLE event_destination_cursors ENABLE ROW LEVEL SECURITY;
ALTER TABLE event_destination_cursors FORCE ROW LEVEL SECURITY;
CREATE POLICY event_destination_cursors_tenant ON event_destination_cursors
  USING ((SELECT app_scope()) = 'system' OR EXISTS (SELECT 1 FROM event_destinations d WHERE d.id = destination_id))
  WITH CHECK ((SELECT app_scope()) = 'system' OR EXISTS (SELECT 1 FROM event_destinations d WHERE d.id = destination_id));

ALTER TABLE event_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE event_deliveries FORCE ROW LEVEL SECURITY;
CREATE POLICY event_deliveries_tenant ON event_deliveries
  USING ((SELECT app_scope()) = 'system' OR EXISTS (SELECT 1 FROM event_destinations d WHERE d.id = destination_id))
  WITH CHECK ((SELECT app_scope()) = 'system' OR EXISTS (SELECT 1 FROM event_destinations d WHERE d.id = destination_id));
