-- A reader's erasure: their comments one discussion at a time, in batches (then their reactions there, on
-- its comments and on the discussion itself), then what else names them.

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
      UPDATE comments SET status = 'deleted', body = '', body_html = '', has_links = false, pinned = false, deleted_at = COALESCE(deleted_at, p_at),
             author_id = '', author_name = NULL, moderation_reason = NULL
       WHERE tenant_id = p_tenant AND id = c.id RETURNING * INTO c;
      IF v_was_visible THEN PERFORM eng_shift_visibility(c, -1); END IF;
    ELSE
      UPDATE comments SET body = CASE WHEN status = 'deleted' THEN '' ELSE p_marker END,
             body_html = CASE WHEN status = 'deleted' THEN '' ELSE p_marker_html END,
             has_links = status <> 'deleted' AND eng_has_links(p_marker_html), author_id = '', author_name = NULL, moderation_reason = NULL
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
    -- (the log keeps its envelopes as text, rows of releases before as json: each is read into jsonb
    -- once, OFFSET 0 keeping the subquery's column one value, and written back as text)
    WITH x AS MATERIALIZED (
      SELECT s.id, s.occurred_at, s.p FROM (SELECT id, occurred_at, COALESCE(envelope, payload::text)::jsonb AS p FROM events
                                             WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND seq <= d.seq OFFSET 0) s
       WHERE s.p #>> '{data,comment,id}' = ANY (v_ids))
    UPDATE events e
       SET envelope = jsonb_set(jsonb_set(jsonb_set(x.p, '{data,comment,author}',
                                                   '{"id":"","name":"[erased]","avatarUrl":null,"badge":null}'::jsonb),
                                         '{data,comment,body}',
                                         to_jsonb(CASE WHEN p_delete OR x.p #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker END)),
                               '{data,comment,bodyHtml}',
                               to_jsonb(CASE WHEN p_delete OR x.p #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker_html END))::text,
           payload = NULL,
           reader_id = CASE WHEN e.reader_id = p_reader THEN '' ELSE e.reader_id END
      FROM x
     WHERE e.id = x.id AND e.occurred_at = x.occurred_at;
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

CREATE OR REPLACE FUNCTION public.eng_erase_reader_rest(p_tenant text, p_reader text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_events int := 0;
  v_reports int := 0;
  v_profile int := 0;
BEGIN
  -- (each envelope read into jsonb once, as in eng_erase_reader_batch, and written back as text)
  WITH x AS MATERIALIZED (
    SELECT s.id, s.occurred_at, s.reader_id, s.p FROM (SELECT id, occurred_at, reader_id, COALESCE(envelope, payload::text)::jsonb AS p FROM events
                                                        WHERE tenant_id = p_tenant OFFSET 0) s
     WHERE s.reader_id = p_reader OR s.p #>> '{data,reaction,readerId}' = p_reader
        OR s.p #>> '{data,notification,readerId}' = p_reader OR s.p #>> '{data,comment,author,id}' = p_reader)
  UPDATE events e
     SET envelope = CASE
           WHEN x.p #>> '{data,reaction,readerId}' = p_reader THEN jsonb_set(x.p, '{data,reaction,readerId}', '""'::jsonb)::text
           WHEN x.p #>> '{data,notification,readerId}' = p_reader THEN jsonb_set(x.p, '{data,notification,readerId}', '""'::jsonb)::text
           WHEN x.p #>> '{data,comment,author,id}' = p_reader THEN
             jsonb_set(jsonb_set(jsonb_set(x.p, '{data,comment,author}', '{"id":"","name":"[erased]","avatarUrl":null,"badge":null}'::jsonb),
                                 '{data,comment,body}', '""'::jsonb), '{data,comment,bodyHtml}', '""'::jsonb)::text
           ELSE x.p::text END,
         payload = NULL,
         reader_id = CASE WHEN e.reader_id = p_reader THEN '' ELSE e.reader_id END
    FROM x
   WHERE e.id = x.id AND e.occurred_at = x.occurred_at;
  GET DIAGNOSTICS v_events = ROW_COUNT;
  DELETE FROM comment_reports WHERE tenant_id = p_tenant AND reader_id = p_reader;
  GET DIAGNOSTICS v_reports = ROW_COUNT;
  DELETE FROM stream_tickets WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- the reader's mail, queued or sent, goes with them (its bodies quote their comments), and the
  -- outbound queue's jobs that would compose it (kind `email_compose`, which name the reader) or send
  -- it (kind `email`, each with its message's id)
  DELETE FROM email_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM webhook_deliveries
   WHERE tenant_id = p_tenant AND kind = 'email_compose' AND message ->> 'readerId' = p_reader;
  DELETE FROM webhook_deliveries d USING email_messages m
   WHERE m.tenant_id = p_tenant AND m.reader_id = p_reader AND d.id = m.id AND d.tenant_id = p_tenant AND d.kind = 'email';
  DELETE FROM email_messages WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and their inbox (items of their own comments in others' inboxes are not listed: author_id is '')
  DELETE FROM inbox_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM inbox_counters WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and the discussions they follow or silenced
  DELETE FROM discussion_subscriptions WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and their hosted sign-in's sessions: the erased reader is signed out everywhere
  DELETE FROM reader_sessions WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and their passkeys: nothing of the erased reader signs in again
  DELETE FROM reader_passkeys WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM idempotency_keys k
   WHERE k.tenant_id = p_tenant AND k.status IS NOT NULL
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(k.results) x
                  WHERE x #>> '{row,authorId}' = p_reader OR x #>> '{row,readerId}' = p_reader);
  DELETE FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  GET DIAGNOSTICS v_profile = ROW_COUNT;
  RETURN json_build_object('eventsScrubbed', v_events, 'reports', v_reports, 'profile', v_profile > 0);
END $function$;
