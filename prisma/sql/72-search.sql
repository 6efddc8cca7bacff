-- Comment search's documents (src/modules/comments/search.ts), a projection of the event log kept off
-- the write path: the search projector (src/modules/comments/engine/search-projector.ts) follows each
-- discussion's events by seq, as a stream does (the seq comes from the discussion's locked row, so seq
-- order is commit order, and every event up to the discussion's head has committed), from its row of
-- search_positions; a comment's events say that it changed, and its document is made from its row
-- as it is then. A comment has a document while it is not deleted (eng_search_has_document).

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
