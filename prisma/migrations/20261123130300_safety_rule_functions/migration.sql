-- Safety rules (the tenant setting `safety`, src/tenancy/safety-rules.ts) and the reasons they record.
-- A post takes the rule's status and reason (decided in TypeScript from the body) and the newReaderHold
-- count, which needs the reader's earlier comments; an edit takes the rule's verdict on the new body.
-- A status change is one path, eng_change_status: a moderator's decision and an edit that a rule holds
-- or rejects change the row, the counts readers see and the events the same way.

-- the row the writes return carries the reason (the event JSON, eng_comment_json_by, never does)
CREATE OR REPLACE FUNCTION eng_comment_row_by(c comments, p_name text, p_avatar text) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at), 'moderationReason', c.moderation_reason::json,
    'author', json_build_object('tenantId', c.tenant_id, 'id', c.author_id, 'name', p_name, 'avatarUrl', p_avatar))
$$;

-- A comment's status changes to p_to with the reason p_reason: the row, the counts of what readers see
-- (discussion and parent), and the events. approved: comment_approved to all (and, the first time it
-- becomes visible, comment_created and the reply notification); rejected: comment_rejected to
-- moderators; pending (held again by a rule on an edit): no event of its own, the edit's event says so.
-- Readers are told nothing of a comment leaving their view: it stops being listed and counted.
CREATE FUNCTION eng_change_status(c comments, p_to text, p_reason jsonb, p_at timestamptz) RETURNS json[] LANGUAGE plpgsql AS $$
DECLARE
  v_was_visible boolean := c.status = 'approved';
  v_first boolean := p_to = 'approved' AND c.published_at IS NULL;
  v_events json[] := ARRAY[]::json[];
BEGIN
  UPDATE comments SET status = p_to::"CommentStatus", published_at = CASE WHEN v_first THEN p_at ELSE published_at END,
         moderation_reason = p_reason
   WHERE tenant_id = c.tenant_id AND id = c.id RETURNING * INTO c;
  IF v_was_visible <> (p_to = 'approved') THEN PERFORM eng_shift_visibility(c, CASE WHEN v_was_visible THEN -1 ELSE 1 END); END IF;
  IF p_to = 'approved' THEN
    v_events := ARRAY[eng_append_event(c.tenant_id, c.discussion_id, 'comment_approved', 'all', NULL,
                                       json_build_object('comment', eng_comment_json(c)), p_at)];
    IF v_first THEN v_events := v_events || eng_announce(c, p_at); END IF;
  ELSIF p_to = 'rejected' THEN
    v_events := ARRAY[eng_append_event(c.tenant_id, c.discussion_id, 'comment_rejected', 'moderators', NULL,
                                       json_build_object('comment', eng_comment_json(c)), p_at)];
  END IF;
  RETURN v_events;
END $$;

-- A moderator's decision records itself as the reason, keeping the automatic one it answered.
CREATE OR REPLACE FUNCTION eng_set_comment_status(p_tenant text, p_id text, p_to text, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
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
END $$;

-- An edit: p_verdict is what the safety rules say of the new body ('rejected', 'pending' or NULL) and
-- p_reason why. A rule makes the status stricter, never looser: a published comment it holds or
-- rejects leaves the readers' view through eng_change_status, and its edit goes to moderators only.
DROP FUNCTION eng_edit_comment(text, text, text, boolean, text, integer, timestamptz);
CREATE FUNCTION eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_window_seconds integer,
                                 p_verdict text, p_reason jsonb, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
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
END $$;

-- A post: p_status and p_reason are the tenant's moderation and the safety rules' verdict on the body.
-- With p_hold > 0 (newReaderHold) and no rule's reason, a reader none of whose comments was ever
-- published and who wrote fewer than p_hold before is held (pending) with a new_reader reason.
DROP FUNCTION eng_post_comment(text, text, text, text, text, text, text, text, text, timestamptz);
CREATE FUNCTION eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text,
                                 p_body text, p_parent text, p_status text, p_reason jsonb, p_hold integer,
                                 p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
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
    -- a reply notification to the parent's author when that is someone else
    IF p_parent IS NOT NULL AND p.author_id <> p_reader THEN
      UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = p_discussion RETURNING seq INTO v_seq;
      v_events := v_events || eng_insert_event(p_tenant, p_discussion, v_seq, 'notification_reply', 'reader', p.author_id,
        json_build_object('notification', json_build_object('readerId', p.author_id, 'commentId', c.id,
                                                            'parentId', c.parent_id, 'discussionId', c.discussion_id)), p_at);
    END IF;
  ELSE
    -- not public until approved: only the author's own stream hears of it
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, v_seq, 'comment_created', 'reader', p_reader,
                                       json_build_object('comment', v_comment), p_at)];
  END IF;
  RETURN json_build_object('row', eng_comment_row_by(c, p_name, p_avatar), 'events', array_to_json(v_events));
END $$;
