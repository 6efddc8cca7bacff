-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone): changed
-- eng_reply_notification(c comments, p_parent_author text, p_at timestamp with time zone): new
-- eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_at timestamp with time zone): changed
-- eng_delete_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_at timestamp with time zone): changed
-- eng_comment_row_by(c comments, p_name text, p_avatar text): changed
-- eng_set_comment_status(p_tenant text, p_id text, p_to text, p_at timestamp with time zone): changed
-- eng_set_comment_pinned(p_tenant text, p_id text, p_pinned boolean, p_at timestamp with time zone): changed
-- eng_announce(c comments, p_at timestamp with time zone): changed
-- eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone): changed
-- eng_set_discussion_state(p_tenant text, p_id text, p_to text, p_event text, p_at timestamp with time zone): changed
-- eng_report_comment(p_tenant text, p_comment text, p_id text, p_reader text, p_name text, p_avatar text, p_reason text, p_note text, p_threshold integer, p_hold boolean, p_at timestamp with time zone): changed
-- eng_ban_reader(p_tenant text, p_reader text, p_id text, p_until timestamp with time zone, p_reason text, p_by text, p_reject_pending boolean, p_at timestamp with time zone): changed
-- eng_append_event(p_tenant text, p_discussion text, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone): changed
-- eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_limit integer, p_at timestamp with time zone): changed

CREATE OR REPLACE FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone)
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
    INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, status, created_at, published_at, moderation_reason)
    VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, v_status::"CommentStatus",
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

CREATE OR REPLACE FUNCTION public.eng_reply_notification(c comments, p_parent_author text, p_at timestamp with time zone)
 RETURNS json[]
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- a visible reply tells the parent's author, when that is someone else, on their own stream (and by
  -- email: eng_insert_event); a post announces it, and so does a held reply's first approval (eng_announce)
  IF c.parent_id IS NULL OR p_parent_author IS NULL OR p_parent_author = c.author_id THEN RETURN ARRAY[]::json[]; END IF;
  RETURN ARRAY[eng_append_event(c.tenant_id, c.discussion_id, 'notification_reply', 'reader', p_parent_author,
    json_build_object('notification', json_build_object('readerId', p_parent_author, 'commentId', c.id,
                                                        'parentId', c.parent_id, 'discussionId', c.discussion_id)), p_at)];
END $function$;

CREATE OR REPLACE FUNCTION public.eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_at timestamp with time zone)
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
  UPDATE comments SET body = p_body, edited_at = p_at,
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
  UPDATE comments SET status = 'deleted', body = '', pinned = false, deleted_at = p_at
   WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  IF v_was_visible THEN PERFORM eng_shift_visibility(c, -1); END IF;
  RETURN eng_result(c, ARRAY[eng_append_event(p_tenant, c.discussion_id, 'comment_deleted',
    CASE WHEN v_was_visible THEN 'all' ELSE 'moderators' END, NULL, json_build_object('comment', eng_comment_json(c)), p_at)]);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_set_comment_status(p_tenant text, p_id text, p_to text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
DECLARE
  d discussions;
  c comments;
  v_events json[];
BEGIN
  c := eng_locked_comment(p_tenant, p_id, true, NULL);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF c.status = 'deleted' THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  PERFORM eng_assert_not_archived(d);
  IF c.status::text = p_to THEN RETURN eng_result(c, ARRAY[]::json[]); END IF;
  v_events := eng_change_status(c, p_to, jsonb_strip_nulls(jsonb_build_object('source', 'moderator', 'decision', p_to,
    'previous', CASE WHEN c.moderation_reason ->> 'source' = 'moderator' THEN c.moderation_reason -> 'previous'
                     ELSE c.moderation_reason END)), p_at);
  SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  RETURN eng_result(c, v_events);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_set_comment_pinned(p_tenant text, p_id text, p_pinned boolean, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
DECLARE
  d discussions;
  c comments;
BEGIN
  c := eng_locked_comment(p_tenant, p_id, true, NULL);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF c.status = 'deleted' THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  PERFORM eng_assert_not_archived(d);
  IF c.pinned = p_pinned THEN RETURN eng_result(c, ARRAY[]::json[]); END IF;
  UPDATE comments SET pinned = p_pinned WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  RETURN eng_result(c, ARRAY[eng_append_event(p_tenant, c.discussion_id,
    CASE WHEN p_pinned THEN 'comment_pinned' ELSE 'comment_unpinned' END,
    CASE WHEN c.status = 'approved' THEN 'all' ELSE 'moderators' END, NULL, json_build_object('comment', eng_comment_json(c)), p_at)]);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_announce(c comments, p_at timestamp with time zone)
 RETURNS json[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_events json[] := ARRAY[eng_append_event(c.tenant_id, c.discussion_id, 'comment_created', 'all', NULL,
                                            json_build_object('comment', eng_comment_json(c)), p_at)];
BEGIN
  IF c.parent_id IS NOT NULL THEN
    v_events := v_events || eng_reply_notification(c,
      (SELECT author_id FROM comments WHERE tenant_id = c.tenant_id AND id = c.parent_id), p_at);
  END IF;
  RETURN v_events;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar
DECLARE
  d discussions;
  c comments;
  v_active boolean;
  v_n int;
  v_counts jsonb;
  v_result json;
BEGIN
  d := eng_take_seq_of(p_tenant, p_comment);
  c := eng_visible_comment(p_tenant, p_comment, p_moderator, p_reader);
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  IF c.status <> 'approved' THEN PERFORM eng_refuse('409', 'comment_not_approved', 'Only approved comments take reactions.'); END IF;
  PERFORM eng_assert_writable(d);
  PERFORM eng_touch_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  DELETE FROM reactions WHERE comment_id = p_comment AND reader_id = p_reader AND kind = p_kind;
  v_active := NOT FOUND;
  IF v_active THEN
    INSERT INTO reactions (tenant_id, comment_id, reader_id, kind, created_at) VALUES (p_tenant, p_comment, p_reader, p_kind, p_at);
  END IF;
  v_n := COALESCE((c.reaction_counts ->> p_kind)::int, 0) + CASE WHEN v_active THEN 1 ELSE -1 END;
  v_counts := CASE WHEN v_n > 0 THEN c.reaction_counts || jsonb_build_object(p_kind, v_n) ELSE c.reaction_counts - p_kind END;
  UPDATE comments SET reaction_counts = v_counts,
         reaction_total = (SELECT COALESCE(sum(value::int), 0) FROM jsonb_each_text(v_counts))
   WHERE tenant_id = p_tenant AND id = p_comment;
  v_result := json_build_object('commentId', p_comment, 'readerId', p_reader, 'kind', p_kind, 'active', v_active, 'counts', v_counts::json);
  RETURN json_build_object('row', v_result, 'events', array_to_json(ARRAY[eng_insert_event(p_tenant, c.discussion_id, d.seq,
    'reaction_toggled', 'all', NULL, json_build_object('reaction', v_result), p_at)]));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_set_discussion_state(p_tenant text, p_id text, p_to text, p_event text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
DECLARE
  d discussions;
BEGIN
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = p_id FOR UPDATE;
  IF d.id IS NULL THEN PERFORM eng_refuse('404', 'not_found', 'Discussion not found.'); END IF;
  PERFORM eng_assert_not_archived(d);
  IF d.state::text = p_to THEN
    RETURN json_build_object('row', eng_discussion_json(d), 'events', '[]'::json);
  END IF;
  UPDATE discussions SET state = p_to::"DiscussionState", updated_at = p_at WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO d;
  RETURN json_build_object('row', eng_discussion_json(d), 'events', array_to_json(ARRAY[eng_append_event(p_tenant, p_id, p_event, 'all', NULL,
    json_build_object('discussion', eng_discussion_json(d)), p_at)]));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_report_comment(p_tenant text, p_comment text, p_id text, p_reader text, p_name text, p_avatar text, p_reason text, p_note text, p_threshold integer, p_hold boolean, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_note
DECLARE
  d discussions;
  c comments;
  r comment_reports;
  v_count int;
  v_reasons jsonb;
  v_events json[] := ARRAY[]::json[];
BEGIN
  d := eng_lock_discussion_of(p_tenant, p_comment);
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  -- a repeat is answered with the reader's report, whatever became of the comment since
  SELECT * INTO r FROM comment_reports WHERE tenant_id = p_tenant AND comment_id = p_comment AND reader_id = p_reader;
  IF FOUND THEN
    RETURN json_build_object('row', json_build_object('report', eng_report_json(r), 'created', false), 'events', '[]'::json);
  END IF;
  c := eng_visible_comment(p_tenant, p_comment, false, p_reader);
  IF c.status = 'deleted' THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  IF c.author_id = p_reader THEN PERFORM eng_refuse('422', 'comment', 'is the reader''s own: readers cannot report their own comments'); END IF;
  PERFORM eng_assert_not_archived(d);
  PERFORM eng_touch_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  INSERT INTO comment_reports (id, tenant_id, comment_id, reader_id, reason, note, status, created_at)
  VALUES (p_id, p_tenant, p_comment, p_reader, p_reason::"ReportReason", p_note, 'open', p_at)
  RETURNING * INTO r;
  SELECT COALESCE(sum(x.n), 0)::int, jsonb_object_agg(x.reason, x.n) INTO v_count, v_reasons
    FROM (SELECT reason::text AS reason, count(*)::int AS n FROM comment_reports
           WHERE tenant_id = p_tenant AND comment_id = p_comment AND status = 'open' GROUP BY reason) x;
  -- at the threshold a published comment is held, unless a moderator approved it after reports held it
  IF p_hold AND v_count >= p_threshold AND c.status = 'approved'
     AND NOT (COALESCE(c.moderation_reason ->> 'source', '') = 'moderator'
              AND COALESCE(c.moderation_reason -> 'previous' ->> 'source', '') = 'reports') THEN
    v_events := eng_change_status(c, 'pending',
      jsonb_build_object('source', 'reports', 'reportCount', v_count, 'reasons', v_reasons), p_at);
  END IF;
  RETURN json_build_object('row', json_build_object('report', eng_report_json(r), 'created', true),
                           'events', COALESCE(array_to_json(v_events), '[]'::json));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_ban_reader(p_tenant text, p_reader text, p_id text, p_until timestamp with time zone, p_reason text, p_by text, p_reject_pending boolean, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_until, p_reason
DECLARE
  s reader_sanctions;
  d discussions;
  c comments;
  v_events json[] := ARRAY[]::json[];
  v_rejected int := 0;
  v_previous jsonb;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM readers WHERE tenant_id = p_tenant AND id = p_reader) THEN
    PERFORM eng_refuse('404', 'not_found', 'Reader not found.');
  END IF;
  -- one sanction in force at a time: a new one replaces the current one
  UPDATE reader_sanctions SET lifted_at = p_at, lifted_by = p_by
   WHERE tenant_id = p_tenant AND reader_id = p_reader AND lifted_at IS NULL AND (until IS NULL OR until > p_at);
  INSERT INTO reader_sanctions (id, tenant_id, reader_id, until, reason, created_by, created_at)
  VALUES (p_id, p_tenant, p_reader, p_until, p_reason, p_by, p_at)
  RETURNING * INTO s;
  IF p_reject_pending THEN
    -- the discussions in one order (their ids), each locked before its comments change
    FOR d IN SELECT * FROM discussions x
              WHERE x.tenant_id = p_tenant AND x.state <> 'archived'
                AND x.id IN (SELECT discussion_id FROM comments WHERE tenant_id = p_tenant AND author_id = p_reader AND status = 'pending')
              ORDER BY x.id FOR UPDATE LOOP
      FOR c IN SELECT * FROM comments
                WHERE tenant_id = p_tenant AND discussion_id = d.id AND author_id = p_reader AND status = 'pending'
                ORDER BY created_at, id LOOP
        v_previous := CASE WHEN c.moderation_reason ->> 'source' = 'moderator' THEN c.moderation_reason -> 'previous'
                           ELSE c.moderation_reason END;
        v_events := v_events || eng_change_status(c, 'rejected', jsonb_build_object('source', 'moderator', 'decision', 'rejected',
          'ban', jsonb_build_object('until', eng_iso(p_until)))
          || CASE WHEN v_previous IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('previous', v_previous) END, p_at);
        v_rejected := v_rejected + 1;
      END LOOP;
    END LOOP;
  END IF;
  RETURN json_build_object('row', json_build_object('sanction', eng_sanction_json(s), 'rejected', v_rejected),
                           'events', COALESCE(array_to_json(v_events), '[]'::json));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_append_event(p_tenant text, p_discussion text, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_reader
DECLARE
  v_seq int;
BEGIN
  UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = p_discussion RETURNING seq INTO v_seq;
  RETURN eng_insert_event(p_tenant, p_discussion, v_seq, p_type, p_audience, p_reader, p_data, p_at);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_limit integer, p_at timestamp with time zone)
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
      UPDATE comments SET status = 'deleted', body = '', pinned = false, deleted_at = COALESCE(deleted_at, p_at),
             author_id = '', author_name = NULL, moderation_reason = NULL
       WHERE tenant_id = p_tenant AND id = c.id RETURNING * INTO c;
      IF v_was_visible THEN PERFORM eng_shift_visibility(c, -1); END IF;
    ELSE
      UPDATE comments SET body = CASE WHEN status = 'deleted' THEN '' ELSE p_marker END, author_id = '', author_name = NULL, moderation_reason = NULL
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
       SET payload = jsonb_set(jsonb_set(e.payload, '{data,comment,author}',
                                         '{"id":"","name":"[erased]","avatarUrl":null}'::jsonb),
                               '{data,comment,body}',
                               to_jsonb(CASE WHEN p_delete OR e.payload #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker END)),
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

CREATE OR REPLACE FUNCTION public.eng_comment_row_by(c comments, p_name text, p_avatar text)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'authorName', c.author_name, 'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at), 'moderationReason', c.moderation_reason::json,
    'author', json_build_object('tenantId', c.tenant_id, 'id', c.author_id, 'name', p_name, 'avatarUrl', p_avatar))
$function$;
