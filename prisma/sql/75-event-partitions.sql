-- The event log's partitions (docs/scaling.md, "The event log, partitioned by day"): `events` is
-- partitioned by range of occurred_at, one partition per UTC day (events_pYYYYMMDD), beside a DEFAULT
-- partition (events_default) that takes any row no day partition covers, so an insert never fails. An
-- installation whose log was one table keeps it as the partition of everything before a boundary
-- (events_legacy). The retention job (src/modules/retention/engine/retention.ts) creates the days ahead and drops the
-- days every replay window has left; the conversion runs from the migration and, online, from
-- src/db/event-log-partitioning.ts.

CREATE OR REPLACE FUNCTION public.eng_event_partition_range(p_name text)
 RETURNS tstzrange
 LANGUAGE sql
 STABLE
AS $function$
  -- the range a partition of events covers (MINVALUE / MAXVALUE: unbounded); null for the DEFAULT
  -- partition and for a table that is not a partition of events
  SELECT tstzrange(CASE WHEN b[1] = 'MINVALUE' THEN NULL ELSE btrim(b[1], '''')::timestamptz END,
                   CASE WHEN b[2] = 'MAXVALUE' THEN NULL ELSE btrim(b[2], '''')::timestamptz END)
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
   CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \((.+)\) TO \((.+)\)') b
   WHERE i.inhparent = to_regclass('public.events') AND c.oid = to_regclass(format('public.%I', p_name)) AND b IS NOT NULL
$function$;

CREATE OR REPLACE FUNCTION public.eng_partition_event_log()
 RETURNS text
 LANGUAGE plpgsql
AS $function$
-- Makes `events` the partitioned log when it is still one table: an empty one is replaced; a populated
-- one is renamed events_legacy and attached as the partition of everything before a boundary. What
-- that attach needs (a unique index on (id, occurred_at), an index on (tenant_id, discussion_id, seq),
-- a validated CHECK bounding occurred_at) is built here only when the online step has not built it
-- first without blocking writers (CREATE INDEX CONCURRENTLY, CHECK … NOT VALID then VALIDATE): then
-- this is catalogue work only. The webhook jobs' foreign key to events goes: a partitioned table's keys
-- include its partition key. Returns what it did: 'partitioned' (nothing to do), 'created', 'attached'.
DECLARE
  v_kind "char" := (SELECT relkind FROM pg_class WHERE oid = to_regclass('public.events'));
  v_bound timestamptz;
BEGIN
  IF v_kind IS DISTINCT FROM 'r' THEN
    RETURN 'partitioned';
  END IF;
  -- events first, then the webhook jobs: the order every write takes them in
  LOCK TABLE events IN ACCESS EXCLUSIVE MODE;
  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'webhook_deliveries_event_id_fkey') THEN
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM events) THEN
    DROP TABLE events;
    PERFORM eng_create_event_log();
    RETURN 'created';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('public.events_legacy_key') AND indisvalid) THEN
    DROP INDEX IF EXISTS events_legacy_key;
    CREATE UNIQUE INDEX events_legacy_key ON events (id, occurred_at);
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('public.events_legacy_seq_idx') AND indisvalid) THEN
    DROP INDEX IF EXISTS events_legacy_seq_idx;
    CREATE INDEX events_legacy_seq_idx ON events (tenant_id, discussion_id, seq);
  END IF;
  -- the boundary: the validated CHECK's, else the UTC day after the newest row (or today)
  SELECT (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1]::timestamptz INTO v_bound
    FROM pg_constraint
   WHERE conrelid = 'public.events'::regclass AND conname = 'events_legacy_range' AND convalidated;
  IF v_bound IS NULL THEN
    ALTER TABLE events DROP CONSTRAINT IF EXISTS events_legacy_range;
    SELECT (date_trunc('day', GREATEST(now(), max(occurred_at)) AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC'
      INTO v_bound FROM events;
    EXECUTE format('ALTER TABLE events ADD CONSTRAINT events_legacy_range CHECK (occurred_at < %L::timestamptz)', v_bound);
  END IF;
  ALTER TABLE events DROP CONSTRAINT events_pkey;
  ALTER TABLE events ADD CONSTRAINT events_legacy_pkey PRIMARY KEY USING INDEX events_legacy_key;
  DROP INDEX IF EXISTS events_tenant_id_discussion_id_seq_key;
  ALTER TABLE events RENAME TO events_legacy;
  -- the log has no index by tenant and time: a day's partition bounds the time, the tenant's prefix of
  -- (tenant_id, discussion_id, seq) the tenant (docs/scaling.md, "What a post writes")
  DROP INDEX IF EXISTS events_tenant_id_occurred_at_idx;
  PERFORM eng_create_event_log();
  -- no scan: the validated CHECK implies the partition's bound, and the indexes match the parent's
  EXECUTE format('ALTER TABLE events ATTACH PARTITION events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', v_bound);
  ALTER TABLE events_legacy DROP CONSTRAINT events_legacy_range;
  RETURN 'attached';
END $function$;

CREATE OR REPLACE FUNCTION public.eng_create_event_log()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
-- The partitioned table (the columns of prisma/schema.prisma's Event) and its DEFAULT partition.
BEGIN
  CREATE TABLE events (
    id uuid NOT NULL,
    tenant_id text NOT NULL,
    discussion_id text NOT NULL,
    seq integer NOT NULL,
    type text NOT NULL,
    audience text NOT NULL DEFAULT 'all',
    reader_id text,
    payload json,
    occurred_at timestamp(3) with time zone NOT NULL DEFAULT CURRENT_TIMESTAMP,
    envelope text,
    CONSTRAINT events_pkey PRIMARY KEY (id, occurred_at)
  ) PARTITION BY RANGE (occurred_at);
  CREATE INDEX events_tenant_id_discussion_id_seq_idx ON events (tenant_id, discussion_id, seq);
  CREATE TABLE events_default PARTITION OF events DEFAULT;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_event_partitions_ahead(p_now timestamp with time zone, p_days integer)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- Creates the day partitions from the UTC day before p_now to p_days after it that no partition covers
-- yet; rows the DEFAULT partition holds for such a day move into it. Each is made apart and attached
-- (ATTACH takes SHARE UPDATE EXCLUSIVE on events, not the ACCESS EXCLUSIVE of CREATE … PARTITION OF);
-- the DEFAULT partition is locked while it is checked. Writes to events wait while a day is made
-- (SHARE ROW EXCLUSIVE on events: reads go on): an insert routed to the DEFAULT partition before the
-- day was attached would otherwise fail its partition constraint once it was (a write of that very
-- day, as when today's partition is missing). Returns how many were created.
DECLARE
  v_day timestamptz;
  v_name text;
  v_made integer := 0;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('public.events')) IS DISTINCT FROM 'p' THEN
    RETURN 0;
  END IF;
  IF to_regclass('public.events_default') IS NULL THEN
    CREATE TABLE events_default PARTITION OF events DEFAULT;
  END IF;
  FOR i IN -1 .. p_days LOOP
    v_day := date_trunc('day', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + make_interval(days => i);
    CONTINUE WHEN EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                           WHERE i.inhparent = 'public.events'::regclass
                             AND eng_event_partition_range(c.relname) && tstzrange(v_day, v_day + interval '1 day'));
    v_name := 'events_p' || to_char(v_day AT TIME ZONE 'UTC', 'YYYYMMDD');
    LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE;
    LOCK TABLE events_default IN ACCESS EXCLUSIVE MODE;
    EXECUTE format('CREATE TABLE %I (LIKE events INCLUDING DEFAULTS)', v_name);
    EXECUTE format('WITH moved AS (DELETE FROM events_default WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved', v_name)
      USING v_day, v_day + interval '1 day';
    EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', v_name, v_day, v_day + interval '1 day');
    v_made := v_made + 1;
  END LOOP;
  RETURN v_made;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_drop_event_partition(p_name text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- Drops one partition of events (the retention job calls it for a partition whose whole range every
-- replay window has left). Its webhook jobs that are done go first (what the old foreign key's cascade
-- did). The events a pending webhook job still needs stay in the log: once the partition is detached no
-- partition covers their day, so they go to the DEFAULT partition (deleted row by row once delivered).
-- Returns {events: rows dropped, kept: rows kept}, or null when the partition is already gone.
DECLARE
  v_rows bigint;
  v_kept integer;
BEGIN
  IF eng_event_partition_range(p_name) IS NULL THEN
    RETURN NULL;
  END IF;
  EXECUTE format('DELETE FROM webhook_deliveries w USING %I e WHERE w.event_id = e.id AND w.status <> ''pending''', p_name);
  EXECUTE format('SELECT count(*) FROM %I', p_name) INTO v_rows;
  EXECUTE format('ALTER TABLE events DETACH PARTITION %I', p_name);
  EXECUTE format('INSERT INTO events SELECT e.* FROM %I e WHERE e.id = ANY (ARRAY(SELECT w.event_id FROM webhook_deliveries w WHERE w.kind = ''webhook'' AND w.status = ''pending''))', p_name);
  GET DIAGNOSTICS v_kept = ROW_COUNT;
  EXECUTE format('DROP TABLE %I', p_name);
  RETURN json_build_object('events', v_rows - v_kept, 'kept', v_kept);
END $function$;
