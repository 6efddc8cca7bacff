-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_event_partitions_ahead(p_now timestamp with time zone, p_days integer): changed

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
