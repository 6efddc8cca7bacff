-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_search_project(p_tenants text[], p_discussions text[], p_limit integer): new
-- eng_search_index(p_tenant text, p_discussion text, p_comments text[]): new
-- eng_search_has_document(c comments): new
-- eng_search_vector(p_body text): new
-- eng_search_rebuild(p_tenant text, p_discussions text[]): new
-- eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_marker_html text, p_limit integer, p_at timestamp with time zone): changed

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
-- next step, "gaps": [[tenant, discussion], …]}.
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
                      FILTER (WHERE e.type IN ('comment_created', 'comment_edited', 'comment_deleted')), ARRAY[]::text[])
      INTO v_found, v_ids
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
    IF v_to < v_head THEN v_more := v_more || json_build_array(k.t, k.d); END IF;
  END LOOP;
  RETURN json_build_object('events', v_events, 'more', array_to_json(v_more), 'gaps', array_to_json(v_gaps));
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

CREATE OR REPLACE FUNCTION public.eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_marker_html text, p_limit integer, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
DECLARE
  d discussions;
  c comments;
  rx record;
  v_events json[] := ARRAY[]::json[];
  v_ids text[] := ARRAY[]::text[];
  v_was_visible boolean;
  v_anonymized int := 0;
  v_removed int := 0;
  v_tombstones int := 0;
  v_reactions int := 0;
  v_votes int := 0;
  v_scrubbed int := 0;
  v_n int;
  v_counts jsonb;
BEGIN
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = p_discussion FOR UPDATE;
  -- d.seq: the events before this batch's own comment_deleted ones, which carry nothing to scrub
  INSERT INTO readers (tenant_id, id, name, avatar_url, created_at, updated_at)
  VALUES (p_tenant, '', '[erased]', NULL, p_at, p_at) ON CONFLICT (tenant_id, id) DO NOTHING;
  FOR c IN SELECT * FROM comments
            WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND author_id = p_reader
            ORDER BY depth DESC, id LIMIT p_limit LOOP
    v_ids := v_ids || c.id;
    v_was_visible := c.status = 'approved';
    IF p_delete THEN
      UPDATE comments SET status = 'deleted', body = '', body_html = '', pinned = false, deleted_at = COALESCE(deleted_at, p_at),
             author_id = '', author_name = NULL, moderation_reason = NULL
       WHERE tenant_id = p_tenant AND id = c.id RETURNING * INTO c;
      IF v_was_visible THEN PERFORM eng_shift_visibility(c, -1); END IF;
    ELSE
      UPDATE comments SET body = CASE WHEN status = 'deleted' THEN '' ELSE p_marker END,
             body_html = CASE WHEN status = 'deleted' THEN '' ELSE p_marker_html END, author_id = '', author_name = NULL, moderation_reason = NULL
       WHERE tenant_id = p_tenant AND id = c.id RETURNING * INTO c;
    END IF;
    -- readers' streams and webhooks are told as for a deletion (eng_delete_comment's event)
    v_events := v_events || eng_append_event(p_tenant, p_discussion, 'comment_deleted',
      CASE WHEN v_was_visible OR (c.status = 'deleted' AND c.published_at IS NOT NULL) THEN 'all' ELSE 'moderators' END,
      NULL, json_build_object('comment', eng_comment_json(c)), p_at);
    IF p_delete AND NOT EXISTS (SELECT 1 FROM comments WHERE tenant_id = p_tenant AND parent_id = c.id) THEN
      DELETE FROM comments WHERE tenant_id = p_tenant AND id = c.id;
      v_removed := v_removed + 1;
    ELSIF p_delete THEN
      v_tombstones := v_tombstones + 1;
    ELSE
      v_anonymized := v_anonymized + 1;
    END IF;
  END LOOP;
  IF cardinality(v_ids) > 0 THEN
    -- their search documents go now, in the erasure's own transaction (the search projector, which
    -- follows the comment_deleted events above, would make none again: eng_search_has_document)
    DELETE FROM comment_search WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND comment_id = ANY (v_ids);
    -- every event that carried one of these comments: no body, no author left in a replay or a delivery
    UPDATE events e
       SET payload = jsonb_set(jsonb_set(jsonb_set(e.payload, '{data,comment,author}',
                                                   '{"id":"","name":"[erased]","avatarUrl":null,"badge":null}'::jsonb),
                                         '{data,comment,body}',
                                         to_jsonb(CASE WHEN p_delete OR e.payload #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker END)),
                               '{data,comment,bodyHtml}',
                               to_jsonb(CASE WHEN p_delete OR e.payload #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker_html END)),
           reader_id = CASE WHEN e.reader_id = p_reader THEN '' ELSE e.reader_id END
     WHERE e.tenant_id = p_tenant AND e.discussion_id = p_discussion AND e.seq <= d.seq
       AND e.payload #>> '{data,comment,id}' = ANY (v_ids);
    GET DIAGNOSTICS v_scrubbed = ROW_COUNT;
  END IF;
  IF cardinality(v_ids) < p_limit THEN
    FOR rx IN SELECT r.comment_id, r.kind FROM comments x JOIN reactions r ON r.comment_id = x.id AND r.reader_id = p_reader
               WHERE x.tenant_id = p_tenant AND x.discussion_id = p_discussion LOOP
      DELETE FROM reactions WHERE comment_id = rx.comment_id AND reader_id = p_reader AND kind = rx.kind;
      SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = rx.comment_id;
      v_n := COALESCE((c.reaction_counts ->> rx.kind)::int, 0) - 1;
      v_counts := CASE WHEN v_n > 0 THEN c.reaction_counts || jsonb_build_object(rx.kind, v_n) ELSE c.reaction_counts - rx.kind END;
      UPDATE comments SET reaction_counts = v_counts,
             reaction_total = (SELECT COALESCE(sum(value::int), 0) FROM jsonb_each_text(v_counts))
       WHERE tenant_id = p_tenant AND id = rx.comment_id;
      v_reactions := v_reactions + 1;
    END LOOP;
    -- their page reactions on this discussion, and its counts without them
    v_n := v_reactions;
    v_counts := d.reaction_counts;
    FOR rx IN DELETE FROM page_reactions WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND reader_id = p_reader RETURNING kind LOOP
      v_counts := CASE WHEN COALESCE((v_counts ->> rx.kind)::int, 0) > 1 THEN v_counts || jsonb_build_object(rx.kind, (v_counts ->> rx.kind)::int - 1)
                       ELSE v_counts - rx.kind END;
      v_reactions := v_reactions + 1;
    END LOOP;
    IF v_reactions > v_n THEN
      UPDATE discussions SET reaction_counts = v_counts WHERE tenant_id = p_tenant AND id = p_discussion;
    END IF;
    -- the reader's votes go, and the tallies they counted in (eng_shift_votes, as a vote taken back)
    FOR rx IN DELETE FROM votes v USING comments x
               WHERE x.tenant_id = p_tenant AND x.discussion_id = p_discussion AND v.comment_id = x.id AND v.reader_id = p_reader
               RETURNING v.comment_id, v.value LOOP
      SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = rx.comment_id;
      PERFORM eng_shift_votes(c, rx.value, 0);
      v_votes := v_votes + 1;
    END LOOP;
  END IF;
  RETURN json_build_object('row', json_build_object('anonymized', v_anonymized, 'removed', v_removed, 'tombstones', v_tombstones,
                                                    'reactions', v_reactions, 'votes', v_votes, 'eventsScrubbed', v_scrubbed,
                                                    'done', cardinality(v_ids) < p_limit),
                           'events', COALESCE(array_to_json(v_events), '[]'::json));
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
