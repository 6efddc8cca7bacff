-- The domain's writes as one statement each (issue "hot paths"): every function below runs inside
-- the caller's single statement, so a write holds the discussion row lock for exactly one round
-- trip. Each locks the discussion row FIRST (the one lock order of the service), then reads what it
-- needs with fresh snapshots (plpgsql, READ COMMITTED), changes the rows, appends its events with
-- their seq and their webhook jobs, and returns JSON for the service: the changed object and the
-- events to publish after the commit. Rules that need the caller (moderator? which reader?) take
-- it as arguments, refusals raise SQLSTATE 'EN4xx' with the problem code as MESSAGE and the
-- human text as DETAIL (src/db/statements.ts maps them to problem documents).
-- Tested through the integration tests of comments, moderation, reactions and discussions.

CREATE FUNCTION eng_iso(ts timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- The comment as the API shows it (src/modules/comments/dto.ts commentDto, same members, same order).
CREATE FUNCTION eng_comment_json(c comments) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'id', c.id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'author', json_build_object('id', r.id, 'name', r.name, 'avatarUrl', r.avatar_url),
    'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', CASE WHEN c.edited_at IS NULL THEN NULL ELSE eng_iso(c.edited_at) END,
    'createdAt', eng_iso(c.created_at), 'reactions', c.reaction_counts::json, 'replyCount', c.reply_count)
  FROM readers r WHERE r.tenant_id = c.tenant_id AND r.id = c.author_id
$$;

-- The row as the service reads it back (a Comment with its author), for the API response.
CREATE FUNCTION eng_comment_row(c comments) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at),
    'author', json_build_object('tenantId', r.tenant_id, 'id', r.id, 'name', r.name, 'avatarUrl', r.avatar_url,
                                'createdAt', eng_iso(r.created_at), 'updatedAt', eng_iso(r.updated_at)))
  FROM readers r WHERE r.tenant_id = c.tenant_id AND r.id = c.author_id
$$;

CREATE FUNCTION eng_discussion_json(d discussions) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object('id', d.id, 'title', d.title, 'url', d.url, 'state', d.state,
    'commentCount', d.comment_count, 'counts', json_build_object('comments', d.comment_count),
    'createdAt', eng_iso(d.created_at), 'updatedAt', eng_iso(d.updated_at))
$$;

-- Appends one event to a discussion whose row the caller holds locked: the next seq, the event row,
-- and one delivery job per subscribed, verified, enabled endpoint (not for reader-private events).
-- Returns {envelope, audience, readerId, jobs}.
CREATE FUNCTION eng_append_event(p_tenant text, p_discussion text, p_type text, p_audience text,
                                 p_reader text, p_data json, p_at timestamptz) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_seq int;
  v_id uuid := gen_random_uuid();
  v_env json;
  v_jobs int := 0;
BEGIN
  UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = p_discussion RETURNING seq INTO v_seq;
  v_env := json_build_object('id', v_id, 'seq', v_seq, 'type', p_type, 'tenantId', p_tenant,
                             'discussionId', p_discussion, 'occurredAt', eng_iso(p_at), 'data', p_data);
  INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
  VALUES (v_id, p_tenant, p_discussion, v_seq, p_type, p_audience, p_reader, v_env::jsonb, p_at);
  IF p_audience <> 'reader' AND p_type <> 'notification_reply' THEN
    INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
    SELECT gen_random_uuid(), w.tenant_id, w.id, v_id, p_at, p_at, p_at
      FROM webhook_endpoints w
     WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'
       AND (w.events @> ARRAY[p_type]::text[] OR w.events @> ARRAY['*']::text[]);
    GET DIAGNOSTICS v_jobs = ROW_COUNT;
  END IF;
  RETURN json_build_object('envelope', v_env, 'audience', p_audience, 'readerId', p_reader, 'jobs', v_jobs);
END $$;

-- Approved (not deleted) comments count in the discussion's commentCount and the parent's replyCount.
CREATE FUNCTION eng_shift_visibility(c comments, p_delta int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE discussions SET comment_count = comment_count + p_delta, updated_at = now()
   WHERE tenant_id = c.tenant_id AND id = c.discussion_id;
  IF c.parent_id IS NOT NULL THEN
    UPDATE comments SET reply_count = reply_count + p_delta WHERE tenant_id = c.tenant_id AND id = c.parent_id;
  END IF;
END $$;

-- A comment becoming visible for the first time: comment_created to all, and a reply notification
-- to the parent's author when that is someone else.
CREATE FUNCTION eng_announce(c comments, p_at timestamptz) RETURNS json[] LANGUAGE plpgsql AS $$
DECLARE
  v_events json[] := ARRAY[eng_append_event(c.tenant_id, c.discussion_id, 'comment_created', 'all', NULL,
                                            json_build_object('comment', eng_comment_json(c)), p_at)];
  v_parent_author text;
BEGIN
  IF c.parent_id IS NOT NULL THEN
    SELECT author_id INTO v_parent_author FROM comments WHERE tenant_id = c.tenant_id AND id = c.parent_id;
    IF v_parent_author IS NOT NULL AND v_parent_author <> c.author_id THEN
      v_events := v_events || eng_append_event(c.tenant_id, c.discussion_id, 'notification_reply', 'reader', v_parent_author,
        json_build_object('notification', json_build_object('readerId', v_parent_author, 'commentId', c.id,
                                                            'parentId', c.parent_id, 'discussionId', c.discussion_id)), p_at);
    END IF;
  END IF;
  RETURN v_events;
END $$;

-- The reader of an identity assertion: inserted on first sight, updated only when the assertion
-- changed the name or avatar (an unchanged reader's row is neither written nor locked).
CREATE FUNCTION eng_touch_reader(p_tenant text, p_reader text, p_name text, p_avatar text, p_at timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO readers (tenant_id, id, name, avatar_url, created_at, updated_at)
  VALUES (p_tenant, p_reader, p_name, p_avatar, p_at, p_at) ON CONFLICT (tenant_id, id) DO NOTHING;
  IF NOT FOUND THEN
    UPDATE readers SET name = p_name, avatar_url = p_avatar, updated_at = p_at
     WHERE tenant_id = p_tenant AND id = p_reader
       AND (name IS DISTINCT FROM p_name OR avatar_url IS DISTINCT FROM p_avatar);
  END IF;
END $$;

CREATE FUNCTION eng_refuse(p_status text, p_code text, p_detail text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'EN' || p_status, MESSAGE = p_code, DETAIL = p_detail;
END $$;

CREATE FUNCTION eng_assert_not_archived(d discussions) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF d.state = 'archived' THEN PERFORM eng_refuse('409', 'discussion_archived', 'The discussion is archived and read-only.'); END IF;
END $$;

CREATE FUNCTION eng_assert_writable(d discussions) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM eng_assert_not_archived(d);
  IF d.state = 'locked' THEN PERFORM eng_refuse('409', 'discussion_locked', 'The discussion is locked.'); END IF;
END $$;

-- The discussion of a comment, locked FOR UPDATE (the caller then reads the comment under that
-- lock). Unknown comment → 404.
CREATE FUNCTION eng_lock_discussion_of(p_tenant text, p_id text) RETURNS discussions LANGUAGE plpgsql AS $$
DECLARE
  v_discussion text;
  d discussions;
BEGIN
  SELECT discussion_id INTO v_discussion FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  IF v_discussion IS NULL THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = v_discussion FOR UPDATE;
  RETURN d;
END $$;

-- The comment for a write: its discussion locked first, then the comment read under that lock.
-- Unknown, or not visible to this caller (moderators see every comment) → 404.
CREATE FUNCTION eng_locked_comment(p_tenant text, p_id text, p_moderator boolean, p_reader text) RETURNS comments
LANGUAGE plpgsql AS $$
DECLARE
  c comments;
BEGIN
  PERFORM eng_lock_discussion_of(p_tenant, p_id);
  SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  IF c.id IS NULL OR NOT eng_visible_to(c, p_moderator, p_reader) THEN
    PERFORM eng_refuse('404', 'not_found', 'Comment not found.');
  END IF;
  RETURN c;
END $$;

-- The (already locked) discussion row of a comment.
CREATE FUNCTION eng_discussion(p_tenant text, p_id text) RETURNS discussions LANGUAGE sql STABLE AS $$
  SELECT * FROM discussions WHERE tenant_id = p_tenant AND id = p_id
$$;

-- Who may see a comment (src/modules/comments/visibility.ts visibleTo).
CREATE FUNCTION eng_visible_to(c comments, p_moderator boolean, p_reader text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT c.status = 'approved' OR (c.status = 'deleted' AND c.published_at IS NOT NULL) OR p_moderator
      OR (p_reader IS NOT NULL AND p_reader = c.author_id)
$$;

CREATE FUNCTION eng_result(c comments, p_events json[]) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object('row', eng_comment_row(c), 'events', COALESCE(array_to_json(p_events), '[]'::json))
$$;

-- POST a comment (creates the discussion on first use).
CREATE FUNCTION eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text,
  p_avatar text, p_body text, p_parent text, p_status text, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  d discussions;
  p comments;
  c comments;
  v_events json[];
BEGIN
  INSERT INTO discussions AS x (tenant_id, id, created_at, updated_at) VALUES (p_tenant, p_discussion, p_at, p_at)
  ON CONFLICT (tenant_id, id) DO UPDATE SET seq = x.seq RETURNING * INTO d;
  PERFORM eng_assert_writable(d);
  IF p_parent IS NOT NULL THEN
    SELECT * INTO p FROM comments WHERE tenant_id = p_tenant AND id = p_parent;
    IF p.id IS NULL OR p.discussion_id <> p_discussion OR p.status <> 'approved' THEN
      PERFORM eng_refuse('422', 'parentId', 'must be the id of a visible comment of this discussion');
    END IF;
  END IF;
  PERFORM eng_touch_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, status, created_at, published_at)
  VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, p_status::"CommentStatus",
          p_at, CASE WHEN p_status = 'approved' THEN p_at END)
  RETURNING * INTO c;
  IF p_status = 'approved' THEN
    PERFORM eng_shift_visibility(c, 1);
    v_events := eng_announce(c, p_at);
  ELSE
    -- not public until approved: only the author's own stream hears of it
    v_events := ARRAY[eng_append_event(p_tenant, p_discussion, 'comment_created', 'reader', p_reader,
                                       json_build_object('comment', eng_comment_json(c)), p_at)];
  END IF;
  RETURN eng_result(c, v_events);
END $$;

-- PATCH a comment: its author, within the edit window (0 = none).
CREATE FUNCTION eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text,
  p_window_seconds int, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  d discussions;
  c comments;
BEGIN
  c := eng_locked_comment(p_tenant, p_id, p_moderator, p_reader);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF c.status = 'deleted' THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  IF c.author_id IS DISTINCT FROM p_reader THEN PERFORM eng_refuse('403', 'not_author', 'Only the comment''s author may edit it.'); END IF;
  PERFORM eng_assert_writable(d);
  IF p_window_seconds > 0 AND p_at - c.created_at > make_interval(secs => p_window_seconds) THEN
    PERFORM eng_refuse('409', 'edit_window_closed', format('Comments can be edited for %s s after posting.', p_window_seconds));
  END IF;
  UPDATE comments SET body = p_body, edited_at = p_at WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  RETURN eng_result(c, ARRAY[eng_append_event(p_tenant, c.discussion_id, 'comment_edited',
    CASE WHEN c.status = 'approved' THEN 'all' ELSE 'moderators' END, NULL, json_build_object('comment', eng_comment_json(c)), p_at)]);
END $$;

-- DELETE a comment (soft): the author or a moderator, a deleted one again is a no-op.
CREATE FUNCTION eng_delete_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_at timestamptz)
RETURNS json LANGUAGE plpgsql AS $$
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
END $$;

-- Approve or reject (moderate_content, checked by the service). Idempotent.
CREATE FUNCTION eng_set_comment_status(p_tenant text, p_id text, p_to text, p_at timestamptz) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  d discussions;
  c comments;
  v_was_visible boolean;
  v_first boolean;
  v_events json[];
BEGIN
  c := eng_locked_comment(p_tenant, p_id, true, NULL);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF c.status = 'deleted' THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  PERFORM eng_assert_not_archived(d);
  IF c.status::text = p_to THEN RETURN eng_result(c, ARRAY[]::json[]); END IF;
  v_was_visible := c.status = 'approved';
  v_first := p_to = 'approved' AND c.published_at IS NULL;
  UPDATE comments SET status = p_to::"CommentStatus", published_at = CASE WHEN v_first THEN p_at ELSE published_at END
   WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  IF v_was_visible <> (p_to = 'approved') THEN PERFORM eng_shift_visibility(c, CASE WHEN v_was_visible THEN -1 ELSE 1 END); END IF;
  IF p_to = 'approved' THEN
    v_events := ARRAY[eng_append_event(p_tenant, c.discussion_id, 'comment_approved', 'all', NULL,
                                       json_build_object('comment', eng_comment_json(c)), p_at)];
    IF v_first THEN v_events := v_events || eng_announce(c, p_at); END IF;
  ELSE
    v_events := ARRAY[eng_append_event(p_tenant, c.discussion_id, 'comment_rejected', 'moderators', NULL,
                                       json_build_object('comment', eng_comment_json(c)), p_at)];
  END IF;
  RETURN eng_result(c, v_events);
END $$;

-- Pin or unpin (moderate_content, checked by the service). Idempotent.
CREATE FUNCTION eng_set_comment_pinned(p_tenant text, p_id text, p_pinned boolean, p_at timestamptz) RETURNS json
LANGUAGE plpgsql AS $$
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
END $$;

-- Toggle the reader's reaction of a kind on an approved comment, counts stay exact.
CREATE FUNCTION eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text,
  p_moderator boolean, p_kind text, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  d discussions;
  c comments;
  v_active boolean;
  v_n int;
  v_counts jsonb;
  v_result json;
BEGIN
  c := eng_locked_comment(p_tenant, p_comment, p_moderator, p_reader);
  d := eng_discussion(p_tenant, c.discussion_id);
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
  RETURN json_build_object('row', v_result, 'events', array_to_json(ARRAY[eng_append_event(p_tenant, c.discussion_id,
    'reaction_toggled', 'all', NULL, json_build_object('reaction', v_result), p_at)]));
END $$;

-- Lock, unlock or archive a discussion. Archived is final, no change, no event.
CREATE FUNCTION eng_set_discussion_state(p_tenant text, p_id text, p_to text, p_event text, p_at timestamptz) RETURNS json
LANGUAGE plpgsql AS $$
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
END $$;
