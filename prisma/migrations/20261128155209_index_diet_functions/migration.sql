-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_is_shadowed(c comments): changed
-- eng_search_project(p_tenants text[], p_discussions text[], p_limit integer): changed
-- eng_search_index(p_tenant text, p_discussion text, p_comments text[]): changed
-- eng_search_has_document(c comments): changed
-- eng_search_words(c comments): new
-- eng_partition_event_log(): changed
-- eng_create_event_log(): changed

CREATE OR REPLACE FUNCTION public.eng_search_project(p_tenants text[], p_discussions text[], p_limit integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- One step of the projector over the discussions (p_tenants[i], p_discussions[i]), of every tenant, in
-- two statements whatever their number (a step over many discussions costs the database little more
-- than a step over one: npm run bench): their position rows made at 0 where missing (in the same order); then, in one
-- statement, the rows locked in one order (two projectors given the same discussions wait for each
-- other, never a deadlock, and the second finds the positions the first left: each event is applied
-- once), each discussion's events after its position up to its head read (at most p_limit a
-- discussion; the rest left to the next step), the documents of the comments they name made again
-- from their rows, the positions moved past them. The head and the events are read in one snapshot:
-- every event up to a head it sees has committed and is in it. Events the log no longer holds (its
-- retention dropped their days while the projector was behind) leave the changed comments unknown:
-- such a discussion is left where it is and answered in `gaps`, for eng_search_rebuild to make its
-- documents again from its comments (a statement of its own, with a longer limit: a whole
-- discussion's). Answers {"events": events passed, "more": [[tenant, discussion], …] left for the
-- next step, "gaps": [[tenant, discussion], …], "lags": seconds from each applied event's time to now}.
DECLARE
  v_result json;
BEGIN
  INSERT INTO search_positions (tenant_id, discussion_id, seq)
  SELECT DISTINCT u.t, u.d, 0 FROM unnest(p_tenants, p_discussions) AS u(t, d) ORDER BY u.t, u.d
  ON CONFLICT DO NOTHING;
  WITH locked AS MATERIALIZED (
    SELECT p.tenant_id, p.discussion_id, p.seq
      FROM search_positions p
     WHERE (p.tenant_id, p.discussion_id) IN (SELECT u.t, u.d FROM unnest(p_tenants, p_discussions) AS u(t, d))
     ORDER BY p.tenant_id, p.discussion_id
       FOR UPDATE OF p
  ), span AS MATERIALIZED (
    -- each discussion behind its head: the events this step takes (pos, to]
    SELECT l.tenant_id, l.discussion_id, l.seq AS pos, LEAST(d.seq, l.seq + p_limit) AS upto, d.seq AS head
      FROM locked l JOIN discussions d ON d.tenant_id = l.tenant_id AND d.id = l.discussion_id
     WHERE d.seq > l.seq
  ), got AS MATERIALIZED (
    SELECT s.tenant_id, s.discussion_id, s.pos, s.upto, s.head, count(e.seq)::int AS n_read,
           array_agg(DISTINCT COALESCE(e.envelope::json, e.payload) #>> '{data,comment,id}')
             FILTER (WHERE e.type IN ('comment_created', 'comment_edited', 'comment_deleted')) AS ids,
           array_agg(extract(epoch FROM clock_timestamp() - e.occurred_at)::real) FILTER (WHERE e.seq IS NOT NULL) AS lags
      FROM span s
      LEFT JOIN events e ON e.tenant_id = s.tenant_id AND e.discussion_id = s.discussion_id AND e.seq > s.pos AND e.seq <= s.upto
     GROUP BY s.tenant_id, s.discussion_id, s.pos, s.upto, s.head
  ), applied AS MATERIALIZED (
    SELECT * FROM got WHERE n_read = upto - pos
  ), named AS MATERIALIZED (
    SELECT a.tenant_id, a.discussion_id, x.id AS comment_id FROM applied a, unnest(a.ids) AS x(id) WHERE x.id IS NOT NULL
  ), dropped AS (
    DELETE FROM comment_search s
     USING named n
     WHERE s.tenant_id = n.tenant_id AND s.discussion_id = n.discussion_id AND s.comment_id = n.comment_id
       AND NOT EXISTS (SELECT 1 FROM comments c WHERE c.tenant_id = n.tenant_id AND c.id = n.comment_id
                                                  AND c.discussion_id = n.discussion_id AND eng_search_has_document(c))
  ), written AS (
    INSERT INTO comment_search AS s (tenant_id, discussion_id, comment_id, author_id, created_at, vector, has_links)
    SELECT c.tenant_id, c.discussion_id, c.id, c.author_id, c.created_at, eng_search_words(c), c.has_links
      FROM named n JOIN comments c ON c.tenant_id = n.tenant_id AND c.id = n.comment_id AND c.discussion_id = n.discussion_id
     WHERE eng_search_has_document(c)
    ON CONFLICT (tenant_id, discussion_id, comment_id) DO UPDATE
       SET author_id = EXCLUDED.author_id, created_at = EXCLUDED.created_at, vector = EXCLUDED.vector, has_links = EXCLUDED.has_links
     WHERE (s.author_id, s.created_at, s.vector, s.has_links)
           IS DISTINCT FROM (EXCLUDED.author_id, EXCLUDED.created_at, EXCLUDED.vector, EXCLUDED.has_links)
  ), moved AS (
    UPDATE search_positions p SET seq = a.upto
      FROM applied a
     WHERE p.tenant_id = a.tenant_id AND p.discussion_id = a.discussion_id
  )
  SELECT json_build_object(
           'events', COALESCE((SELECT sum(upto - pos) FROM applied), 0),
           'more', COALESCE((SELECT json_agg(json_build_array(tenant_id, discussion_id)) FROM applied WHERE upto < head), '[]'::json),
           'gaps', COALESCE((SELECT json_agg(json_build_array(tenant_id, discussion_id)) FROM got WHERE n_read < upto - pos), '[]'::json),
           'lags', COALESCE((SELECT json_agg(l) FROM applied, unnest(lags) AS l), '[]'::json))
    INTO v_result;
  RETURN v_result;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_search_index(p_tenant text, p_discussion text, p_comments text[])
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- nullable: p_comments
-- The documents of these comments of the discussion (NULL: of all its comments, and of none that is
-- gone) made from their rows as they are now (the words, with the author and creation time a search
-- walks them by, and whether it shows a link): written where they differ, deleted where the comment has
-- none (deleted, or no longer there). Answers the documents written.
DECLARE
  v_written int;
BEGIN
  DELETE FROM comment_search s
   WHERE s.tenant_id = p_tenant AND s.discussion_id = p_discussion AND (p_comments IS NULL OR s.comment_id = ANY (p_comments))
     AND NOT EXISTS (SELECT 1 FROM comments c WHERE c.tenant_id = p_tenant AND c.id = s.comment_id AND c.discussion_id = p_discussion
                                                AND eng_search_has_document(c));
  INSERT INTO comment_search AS s (tenant_id, discussion_id, comment_id, author_id, created_at, vector, has_links)
  SELECT c.tenant_id, c.discussion_id, c.id, c.author_id, c.created_at, eng_search_words(c), c.has_links
    FROM comments c
   WHERE c.tenant_id = p_tenant AND c.discussion_id = p_discussion AND (p_comments IS NULL OR c.id = ANY (p_comments))
     AND eng_search_has_document(c)
  ON CONFLICT (tenant_id, discussion_id, comment_id) DO UPDATE
     SET author_id = EXCLUDED.author_id, created_at = EXCLUDED.created_at, vector = EXCLUDED.vector, has_links = EXCLUDED.has_links
   WHERE (s.author_id, s.created_at, s.vector, s.has_links)
         IS DISTINCT FROM (EXCLUDED.author_id, EXCLUDED.created_at, EXCLUDED.vector, EXCLUDED.has_links);
  GET DIAGNOSTICS v_written = ROW_COUNT;
  RETURN v_written;
END $function$;

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

CREATE OR REPLACE FUNCTION public.eng_is_shadowed(c comments)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- a shadow ban's comment: stored rejected with the reason shadow_ban (comments_shadow_idx holds a reader's rejected comments by discussion)
  SELECT c.status = 'rejected' AND c.moderation_reason ->> 'source' = 'shadow_ban'
$function$;

CREATE OR REPLACE FUNCTION public.eng_search_has_document(c comments)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- every comment but a deleted one (whose body is cleared): comment search walks the comments of the
  -- other statuses by their documents (src/modules/comments/search.ts)
  SELECT c.status <> 'deleted'
$function$;

CREATE OR REPLACE FUNCTION public.eng_search_words(c comments)
 RETURNS tsvector
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- a document's words: the body's, none for an erased reader's comment (kept for its replies), which
  -- keeps none of their words: a search by its filters finds it, one by words never
  SELECT CASE WHEN c.author_id = '' THEN ''::tsvector ELSE eng_search_vector(c.body) END
$function$;
