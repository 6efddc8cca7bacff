-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_at timestamp with time zone): dropped
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone): dropped
-- eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_limit integer, p_at timestamp with time zone): dropped
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone): new
-- eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_body_html text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_at timestamp with time zone): new
-- eng_delete_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_at timestamp with time zone): changed
-- eng_comment_row_by(c comments, p_name text, p_avatar text): changed
-- eng_comment_json_by(c comments, p_author json): changed
-- eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_marker_html text, p_limit integer, p_at timestamp with time zone): new
-- eng_erase_reader_rest(p_tenant text, p_reader text): changed

DROP FUNCTION public.eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_at timestamp with time zone);

DROP FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone);

DROP FUNCTION public.eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_limit integer, p_at timestamp with time zone);

CREATE OR REPLACE FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_parent, p_reason
DECLARE
  v_status text := p_status;
  v_reason jsonb := p_reason;
  v_earlier int;
  v_visible int;
  v_parent_ok boolean := true;
  v_reader_current boolean;
  v_seq int;
  d discussions;
  p comments;
  c comments;
  v_comment json;
  v_events json[];
BEGIN
  -- 1. outside the discussion's lock
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  IF p_hold > 0 AND v_reason IS NULL AND v_status <> 'rejected'
     AND NOT EXISTS (SELECT 1 FROM comments WHERE tenant_id = p_tenant AND author_id = p_reader AND published_at IS NOT NULL) THEN
    SELECT count(*) INTO v_earlier FROM (SELECT 1 FROM comments WHERE tenant_id = p_tenant AND author_id = p_reader LIMIT p_hold) x;
    IF v_earlier < p_hold THEN
      v_status := 'pending';
      v_reason := jsonb_build_object('source', 'new_reader', 'newReaderHold', p_hold, 'earlierComments', v_earlier);
    END IF;
  END IF;
  v_visible := CASE WHEN v_status = 'approved' THEN 1 ELSE 0 END;
  IF p_parent IS NOT NULL THEN
    SELECT * INTO p FROM comments WHERE tenant_id = p_tenant AND id = p_parent;
    v_parent_ok := p.id IS NOT NULL AND p.discussion_id = p_discussion;
  END IF;
  v_reader_current := eng_reader_current(p_tenant, p_reader, p_name, p_avatar);
  IF v_parent_ok THEN
    INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, body_html, status, created_at, published_at, moderation_reason)
    VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, p_body_html, v_status::"CommentStatus",
            p_at, CASE WHEN v_visible = 1 THEN p_at END, v_reason)
    RETURNING * INTO c;
  END IF;
  v_comment := eng_comment_json_by(c, json_build_object('id', p_reader, 'name', p_name, 'avatarUrl', p_avatar));
  -- 2. the discussion's row: its next seq and count
  INSERT INTO discussions AS x (tenant_id, id, seq, comment_count, created_at, updated_at)
  VALUES (p_tenant, p_discussion, 1, v_visible, p_at, CASE WHEN v_visible = 1 THEN now() ELSE p_at END)
  ON CONFLICT (tenant_id, id) DO UPDATE
     SET seq = x.seq + 1, comment_count = x.comment_count + v_visible,
         updated_at = CASE WHEN v_visible = 1 THEN now() ELSE x.updated_at END
  RETURNING * INTO d;
  v_seq := d.seq;
  -- 3. under it
  PERFORM eng_assert_writable(d);
  IF p_parent IS NOT NULL THEN
    -- the parent's status can change until the discussion is locked: checked (and counted) here
    IF v_parent_ok AND v_visible = 1 THEN
      UPDATE comments SET reply_count = reply_count + 1 WHERE tenant_id = p_tenant AND id = p_parent AND status = 'approved';
      v_parent_ok := FOUND;
    ELSIF v_parent_ok THEN
      SELECT status = 'approved' INTO v_parent_ok FROM comments WHERE tenant_id = p_tenant AND id = p_parent;
    END IF;
    IF NOT v_parent_ok THEN
      PERFORM eng_refuse('422', 'parentId', 'must be the id of a visible comment of this discussion');
    END IF;
  END IF;
  IF NOT v_reader_current THEN
    PERFORM eng_write_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  END IF;
  IF v_visible = 1 THEN
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, v_seq, 'comment_created', 'all', NULL,
                                       json_build_object('comment', v_comment), p_at)];
    IF p_parent IS NOT NULL THEN v_events := v_events || eng_reply_notification(c, p.author_id, p_at); END IF;
  ELSE
    -- not public until approved: only the author's own stream hears of it
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, v_seq, 'comment_created', 'reader', p_reader,
                                       json_build_object('comment', v_comment), p_at)];
  END IF;
  RETURN json_build_object('row', eng_comment_row_by(c, p_name, p_avatar), 'events', array_to_json(v_events));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_body_html text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_verdict, p_reason
DECLARE
  d discussions;
  c comments;
  v_to text;
  v_events json[] := ARRAY[]::json[];
BEGIN
  c := eng_locked_comment(p_tenant, p_id, p_moderator, p_reader);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF c.status = 'deleted' THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  IF c.author_id IS DISTINCT FROM p_reader THEN PERFORM eng_refuse('403', 'not_author', 'Only the comment''s author may edit it.'); END IF;
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  PERFORM eng_assert_writable(d);
  IF p_window_seconds > 0 AND p_at - c.created_at > make_interval(secs => p_window_seconds) THEN
    PERFORM eng_refuse('409', 'edit_window_closed', format('Comments can be edited for %s s after posting.', p_window_seconds));
  END IF;
  v_to := CASE WHEN p_verdict = 'rejected' AND c.status <> 'rejected' THEN 'rejected'
               WHEN p_verdict = 'pending' AND c.status = 'approved' THEN 'pending' END;
  UPDATE comments SET body = p_body, body_html = p_body_html, edited_at = p_at,
         moderation_reason = CASE WHEN p_verdict IS NOT NULL AND p_verdict = c.status::text THEN p_reason ELSE moderation_reason END
   WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  IF v_to IS NOT NULL THEN
    v_events := eng_change_status(c, v_to, p_reason, p_at);
    SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  END IF;
  RETURN eng_result(c, v_events || eng_append_event(p_tenant, c.discussion_id, 'comment_edited',
    CASE WHEN c.status = 'approved' THEN 'all' ELSE 'moderators' END, NULL, json_build_object('comment', eng_comment_json(c)), p_at));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_delete_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_reader
DECLARE
  d discussions;
  c comments;
  v_was_visible boolean;
BEGIN
  c := eng_locked_comment(p_tenant, p_id, p_moderator, p_reader);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF NOT p_moderator AND c.author_id IS DISTINCT FROM p_reader THEN
    PERFORM eng_refuse('403', 'not_author', 'Only the author or a moderator may delete this comment.');
  END IF;
  IF c.status = 'deleted' THEN RETURN eng_result(c, ARRAY[]::json[]); END IF;
  PERFORM eng_assert_not_archived(d);
  v_was_visible := c.status = 'approved';
  UPDATE comments SET status = 'deleted', body = '', body_html = '', pinned = false, deleted_at = p_at
   WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  IF v_was_visible THEN PERFORM eng_shift_visibility(c, -1); END IF;
  RETURN eng_result(c, ARRAY[eng_append_event(p_tenant, c.discussion_id, 'comment_deleted',
    CASE WHEN v_was_visible THEN 'all' ELSE 'moderators' END, NULL, json_build_object('comment', eng_comment_json(c)), p_at)]);
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
    -- every event that carried one of these comments: no body, no author left in a replay or a delivery
    UPDATE events e
       SET payload = jsonb_set(jsonb_set(jsonb_set(e.payload, '{data,comment,author}',
                                                   '{"id":"","name":"[erased]","avatarUrl":null}'::jsonb),
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
  END IF;
  RETURN json_build_object('row', json_build_object('anonymized', v_anonymized, 'removed', v_removed, 'tombstones', v_tombstones,
                                                    'reactions', v_reactions, 'eventsScrubbed', v_scrubbed,
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
  UPDATE events e
     SET payload = CASE
           WHEN e.payload #>> '{data,reaction,readerId}' = p_reader THEN jsonb_set(e.payload, '{data,reaction,readerId}', '""'::jsonb)
           WHEN e.payload #>> '{data,notification,readerId}' = p_reader THEN jsonb_set(e.payload, '{data,notification,readerId}', '""'::jsonb)
           WHEN e.payload #>> '{data,comment,author,id}' = p_reader THEN
             jsonb_set(jsonb_set(jsonb_set(e.payload, '{data,comment,author}', '{"id":"","name":"[erased]","avatarUrl":null}'::jsonb),
                                 '{data,comment,body}', '""'::jsonb), '{data,comment,bodyHtml}', '""'::jsonb)
           ELSE e.payload END,
         reader_id = CASE WHEN e.reader_id = p_reader THEN '' ELSE e.reader_id END
   WHERE e.tenant_id = p_tenant
     AND (e.reader_id = p_reader OR e.payload #>> '{data,reaction,readerId}' = p_reader
          OR e.payload #>> '{data,notification,readerId}' = p_reader OR e.payload #>> '{data,comment,author,id}' = p_reader);
  GET DIAGNOSTICS v_events = ROW_COUNT;
  DELETE FROM comment_reports WHERE tenant_id = p_tenant AND reader_id = p_reader;
  GET DIAGNOSTICS v_reports = ROW_COUNT;
  DELETE FROM stream_tickets WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- the reader's mail, queued or sent, goes with them (its bodies quote their comments)
  DELETE FROM email_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM email_messages WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM idempotency_keys k
   WHERE k.tenant_id = p_tenant AND k.status IS NOT NULL
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(k.results) x
                  WHERE x #>> '{row,authorId}' = p_reader OR x #>> '{row,readerId}' = p_reader);
  DELETE FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  GET DIAGNOSTICS v_profile = ROW_COUNT;
  RETURN json_build_object('eventsScrubbed', v_events, 'reports', v_reports, 'profile', v_profile > 0);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_comment_row_by(c comments, p_name text, p_avatar text)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'authorName', c.author_name, 'body', c.body, 'bodyHtml', c.body_html, 'status', c.status, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at), 'moderationReason', c.moderation_reason::json,
    'author', json_build_object('tenantId', c.tenant_id, 'id', c.author_id, 'name', p_name, 'avatarUrl', p_avatar))
$function$;

CREATE OR REPLACE FUNCTION public.eng_comment_json_by(c comments, p_author json)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'id', c.id, 'discussionId', c.discussion_id, 'parentId', c.parent_id, 'author', p_author,
    'body', c.body, 'bodyHtml', c.body_html, 'status', c.status, 'pinned', c.pinned,
    'editedAt', CASE WHEN c.edited_at IS NULL THEN NULL ELSE eng_iso(c.edited_at) END,
    'createdAt', eng_iso(c.created_at), 'reactions', c.reaction_counts::json, 'replyCount', c.reply_count)
$function$;
