-- Comment search's documents (src/modules/comments/search.ts), a projection of the event log kept off
-- the write path: the search projector (src/modules/comments/engine/search-projector.ts) follows each
-- discussion's events by seq, as a stream does (the seq comes from the discussion's locked row, so seq
-- order is commit order, and every event up to the discussion's head has committed), from its row of
-- search_positions; a comment's events say that it changed, and its document is made from its row
-- as it is then. A comment has a document while it is neither deleted nor by an erased reader.

CREATE OR REPLACE FUNCTION public.eng_search_project(p_tenants text[], p_discussions text[], p_limit integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- One step of the projector over the discussions (p_tenants[i], p_discussions[i]), of every tenant:
-- for each, its position row (made at 0 when missing) locked, then the events after it up to its head
-- applied (p_limit events in all, the rest left to the next step): the documents of the comments they
-- name made again, the position moved past them. The rows are locked one discussion at a time in one
-- order, so two projectors given the same discussions wait for each other (never a deadlock) and the
-- second finds the position the first left: each event is applied once. Events the log no longer
-- holds (its retention dropped their days while the projector was behind) leave the changed comments
-- unknown: such a discussion is left where it is and answered in `gaps`, for eng_search_rebuild to
-- make its documents again from its comments (a statement of its own, with a longer limit: a whole
-- discussion's). Answers {"events": events passed, "more": [[tenant, discussion], …] left for the
-- next step, "gaps": [[tenant, discussion], …], "lags": seconds from each applied event's time to
-- now}.
DECLARE
  k record;
  v_pos int;
  v_head int;
  v_to int;
  v_found int;
  v_ids text[];
  v_events int := 0;
  v_more json[] := ARRAY[]::json[];
  v_gaps json[] := ARRAY[]::json[];
  v_lags real[] := ARRAY[]::real[];
  v_lag real[];
BEGIN
  FOR k IN SELECT DISTINCT u.t, u.d FROM unnest(p_tenants, p_discussions) AS u(t, d) ORDER BY u.t, u.d LOOP
    IF v_events >= p_limit THEN
      v_more := v_more || json_build_array(k.t, k.d);
      CONTINUE;
    END IF;
    INSERT INTO search_positions (tenant_id, discussion_id, seq) VALUES (k.t, k.d, 0) ON CONFLICT DO NOTHING;
    SELECT seq INTO v_pos FROM search_positions WHERE tenant_id = k.t AND discussion_id = k.d FOR UPDATE;
    -- the head after the lock: every event up to it has committed, so the read below sees them all
    SELECT seq INTO v_head FROM discussions WHERE tenant_id = k.t AND id = k.d;
    CONTINUE WHEN v_head IS NULL OR v_head <= v_pos;
    v_to := LEAST(v_head, v_pos + p_limit - v_events);
    SELECT count(*)::int,
           COALESCE(array_agg(DISTINCT e.payload #>> '{data,comment,id}')
                      FILTER (WHERE e.type IN ('comment_created', 'comment_edited', 'comment_deleted')), ARRAY[]::text[]),
           array_agg(extract(epoch FROM clock_timestamp() - e.occurred_at)::real)
      INTO v_found, v_ids, v_lag
      FROM events e
     WHERE e.tenant_id = k.t AND e.discussion_id = k.d AND e.seq > v_pos AND e.seq <= v_to;
    IF v_found < v_to - v_pos THEN
      v_gaps := v_gaps || json_build_array(k.t, k.d);
      CONTINUE;
    END IF;
    IF cardinality(v_ids) > 0 THEN
      PERFORM eng_search_index(k.t, k.d, v_ids);
    END IF;
    UPDATE search_positions SET seq = v_to WHERE tenant_id = k.t AND discussion_id = k.d;
    v_events := v_events + (v_to - v_pos);
    v_lags := v_lags || v_lag;
    IF v_to < v_head THEN v_more := v_more || json_build_array(k.t, k.d); END IF;
  END LOOP;
  RETURN json_build_object('events', v_events, 'more', array_to_json(v_more), 'gaps', array_to_json(v_gaps),
                           'lags', array_to_json(v_lags));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_search_index(p_tenant text, p_discussion text, p_comments text[])
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- nullable: p_comments
-- The documents of these comments of the discussion (NULL: of all its comments, and of none that is
-- gone) made from their rows as they are now (the words, with the author and creation time a search
-- walks them by): written where they differ, deleted where the comment has none (deleted, its author
-- erased, or no longer there). Answers the documents written.
DECLARE
  v_written int;
BEGIN
  DELETE FROM comment_search s
   WHERE s.tenant_id = p_tenant AND s.discussion_id = p_discussion AND (p_comments IS NULL OR s.comment_id = ANY (p_comments))
     AND NOT EXISTS (SELECT 1 FROM comments c WHERE c.tenant_id = p_tenant AND c.id = s.comment_id AND c.discussion_id = p_discussion
                                                AND eng_search_has_document(c));
  INSERT INTO comment_search AS s (tenant_id, discussion_id, comment_id, author_id, created_at, vector)
  SELECT c.tenant_id, c.discussion_id, c.id, c.author_id, c.created_at, eng_search_vector(c.body)
    FROM comments c
   WHERE c.tenant_id = p_tenant AND c.discussion_id = p_discussion AND (p_comments IS NULL OR c.id = ANY (p_comments))
     AND eng_search_has_document(c)
  ON CONFLICT (tenant_id, discussion_id, comment_id) DO UPDATE
     SET author_id = EXCLUDED.author_id, created_at = EXCLUDED.created_at, vector = EXCLUDED.vector
   WHERE (s.author_id, s.created_at, s.vector) IS DISTINCT FROM (EXCLUDED.author_id, EXCLUDED.created_at, EXCLUDED.vector);
  GET DIAGNOSTICS v_written = ROW_COUNT;
  RETURN v_written;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_search_has_document(c comments)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- a deleted comment's body is cleared; an erased reader's comments keep none of their words
  SELECT c.status <> 'deleted' AND c.author_id <> ''
$function$;

CREATE OR REPLACE FUNCTION public.eng_search_vector(p_body text)
 RETURNS tsvector
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  -- the body's words, lower-cased (the 'simple' configuration: no stemming, no stop words) and without
  -- accents; a query's words go through the same (phraseto_tsquery('simple', eng_unaccent(…)))
  SELECT to_tsvector('simple'::regconfig, eng_unaccent(p_body))
$function$;

CREATE OR REPLACE FUNCTION public.eng_search_rebuild(p_tenant text, p_discussions text[])
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- The documents of these discussions of the tenant made again from their comments as they are now
-- (`engagement search rebuild`, an import's discussions once their comments are written, and a
-- discussion whose events the log no longer holds, which eng_search_project answers in `gaps`), each
-- under its position row's lock, in the projector's order, the position then moved to the head: the
-- projector goes on from there. The head is read before the comments, so an event up to it is in the
-- rows read, and one after it is the projector's. Answers the documents written.
DECLARE
  v_discussion text;
  v_head int;
  v_written int := 0;
BEGIN
  FOR v_discussion IN SELECT DISTINCT u.d FROM unnest(p_discussions) AS u(d) ORDER BY u.d LOOP
    INSERT INTO search_positions (tenant_id, discussion_id, seq) VALUES (p_tenant, v_discussion, 0) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM search_positions WHERE tenant_id = p_tenant AND discussion_id = v_discussion FOR UPDATE;
    SELECT seq INTO v_head FROM discussions WHERE tenant_id = p_tenant AND id = v_discussion;
    v_written := v_written + eng_search_index(p_tenant, v_discussion, NULL);
    UPDATE search_positions SET seq = GREATEST(seq, COALESCE(v_head, 0)) WHERE tenant_id = p_tenant AND discussion_id = v_discussion;
  END LOOP;
  RETURN v_written;
END $function$;

-- unaccent as an IMMUTABLE function, so that a document's words (eng_search_vector) and a query's
-- are made by one immutable expression (unaccent() is STABLE: its dictionary could change). It is the
-- unaccent extension's own C entry point declared IMMUTABLE, not an SQL wrapper around it: PostgreSQL
-- cannot inline an IMMUTABLE SQL function whose body is STABLE, so a wrapper is planned again by every
-- statement that calls it. With one argument, unaccent_dict uses the dictionary named unaccent on the
-- search_path (public, where the extension lives; the service never changes search_path). PGlite loads
-- the same module.
CREATE OR REPLACE FUNCTION public.eng_unaccent(p_text text)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS '$libdir/unaccent', $function$unaccent_dict$function$;
