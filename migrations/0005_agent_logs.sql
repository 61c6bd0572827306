-- Agent diagnostic logs and stored device event logs (SPEC "Agent diagnostic log entry", "Device
-- event log entry"). Append-only from the service's side: agents insert, users read.
--
-- No foreign keys to devices/organizations: rows are only written for an authenticated device,
-- devices are never hard-deleted, and a per-row RI check (a locked lookup) would be the most
-- expensive step of the busiest insert path.

-- UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then the sub-millisecond fraction in the 12 bits of
-- rand_a (as PostgreSQL 18's uuidv7() does), then random bits. Ids grow with insertion time, so the
-- primary key is appended to rather than written at random pages, and rows sharing a timestamp
-- sort by insertion. Own name: PostgreSQL 18 (PGlite) ships a uuidv7() of its own. PL/pgSQL because
-- it computes the clock once and measured half the per-row cost of the SQL-function form.
CREATE FUNCTION dms_uuid_v7() RETURNS uuid LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
DECLARE
  -- Milliseconds * 4096 + the fraction of the millisecond in 1/4096ths.
  t bigint := (extract(epoch FROM clock_timestamp()) * 4096000)::bigint;
BEGIN
  RETURN encode(int8send(((t >> 12) << 16) | 28672 | (t & 4095)) || substring(uuid_send(gen_random_uuid()) FROM 9 FOR 8), 'hex')::uuid;
END
$$;

CREATE TABLE diagnostic_logs (
  id uuid PRIMARY KEY DEFAULT dms_uuid_v7(),
  device_id uuid NOT NULL,
  org_id uuid NOT NULL,
  timestamp timestamptz(3) NOT NULL,
  level text NOT NULL CHECK (level IN ('debug', 'info', 'warn', 'error')),
  component varchar(100) NOT NULL,
  message text NOT NULL,
  fields jsonb CHECK (fields IS NULL OR jsonb_typeof(fields) = 'object'),
  agent_version varchar(50),
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
-- Every query is one device's rows, newest first; level/component/time filters ride on it.
CREATE INDEX diagnostic_logs_device_time ON diagnostic_logs (device_id, timestamp DESC, id DESC);
-- No trigram index on message: `search` always runs inside one device's logs, which the
-- (device_id, timestamp) index narrows first, while keeping a trigram index current cost ~40 µs
-- per inserted row and halved ingestion (26k vs 55k entries/s), the busiest path (DESIGN.md §6).

CREATE TABLE device_event_logs (
  id uuid PRIMARY KEY DEFAULT dms_uuid_v7(),
  device_id uuid NOT NULL,
  org_id uuid NOT NULL,
  timestamp timestamptz(3) NOT NULL,
  level text NOT NULL CHECK (level IN ('info', 'warning', 'error', 'critical')),
  category text NOT NULL CHECK (category IN ('security', 'hardware', 'application', 'system')),
  source varchar(255) NOT NULL,
  event_id varchar(100),
  message text NOT NULL,
  details jsonb CHECK (details IS NULL OR jsonb_typeof(details) = 'object'),
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX device_event_logs_device_time ON device_event_logs (device_id, timestamp DESC, id DESC);
-- SPEC: (deviceId, source, eventId) is unique; an event without eventId is never a duplicate
-- (API.md §6). Inserts name this index in ON CONFLICT … DO NOTHING.
CREATE UNIQUE INDEX device_event_logs_dedupe ON device_event_logs (device_id, source, event_id) WHERE event_id IS NOT NULL;

GRANT EXECUTE ON FUNCTION dms_uuid_v7() TO dms_app;
GRANT SELECT, INSERT ON diagnostic_logs, device_event_logs TO dms_app;
-- 0001's default privileges also gave UPDATE and DELETE: the app only appends and reads here.
REVOKE UPDATE, DELETE ON diagnostic_logs, device_event_logs FROM dms_app;

ALTER TABLE diagnostic_logs ENABLE ROW LEVEL SECURITY;
ALTER TABLE diagnostic_logs FORCE ROW LEVEL SECURITY;
CREATE POLICY diagnostic_logs_tenant ON diagnostic_logs
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));

ALTER TABLE device_event_logs ENABLE ROW LEVEL SECURITY;
ALTER TABLE device_event_logs FORCE ROW LEVEL SECURITY;
CREATE POLICY device_event_logs_tenant ON device_event_logs
  USING ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())))
  WITH CHECK ((SELECT app_scope()) = 'system' OR org_id IN (SELECT unnest(app_org_ids())));
