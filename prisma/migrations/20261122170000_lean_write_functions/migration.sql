-- Leaner write functions (issue "hot paths"): the same rules and results as
-- 20261122090000_write_functions, with less work per write inside the one statement.
--  * eng_iso is STABLE (to_char is): an IMMUTABLE wrapper around a STABLE call is never inlined, so
--    every timestamp was a function call of its own (about an eighth of a post's database time).
--  * eng_insert_event: an event with a seq the caller already took (eng_append_event = take the
--    next seq + eng_insert_event), so a post bumps the discussion's seq and counts in ONE update of
--    the row it locks instead of three (upsert, visibility, seq).
--  * eng_post_comment builds the comment's event payload with the author it was given
--    (eng_comment_json_by) instead of reading the reader back; comment rows come back without the
--    reader's own timestamps (no API shows them).
--  * eng_toggle_reaction locks the discussion by taking its seq (eng_take_seq_of).

ALTER FUNCTION eng_iso(timestamptz) STABLE;

-- The comment as the API shows it (src/modules/comments/dto.ts commentDto, same members, same order)
-- with its author given: a caller that has the author at hand does not read the reader back.
CREATE FUNCTION eng_comment_json_by(c comments, p_author json) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'id', c.id, 'discussionId', c.discussion_id, 'parentId', c.parent_id, 'author', p_author,
    'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', CASE WHEN c.edited_at IS NULL THEN NULL ELSE eng_iso(c.edited_at) END,
    'createdAt', eng_iso(c.created_at), 'reactions', c.reaction_counts::json, 'replyCount', c.reply_count)
$$;

CREATE OR REPLACE FUNCTION eng_comment_json(c comments) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT eng_comment_json_by(c, json_build_object('id', r.id, 'name', r.name, 'avatarUrl', r.avatar_url))
  FROM readers r WHERE r.tenant_id = c.tenant_id AND r.id = c.author_id
$$;

-- A comment read under its discussion's lock; unknown, or not visible to this caller (moderators
-- see every comment) → 404.
CREATE FUNCTION eng_visible_comment(p_tenant text, p_id text, p_moderator boolean, p_reader text) RETURNS comments
LANGUAGE plpgsql AS $$
DECLARE
  c comments;
BEGIN
  SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  IF c.id IS NULL OR NOT eng_visible_to(c, p_moderator, p_reader) THEN
    PERFORM eng_refuse('404', 'not_found', 'Comment not found.');
  END IF;
  RETURN c;
END $$;

CREATE OR REPLACE FUNCTION eng_locked_comment(p_tenant text, p_id text, p_moderator boolean, p_reader text) RETURNS comments
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM eng_lock_discussion_of(p_tenant, p_id);
  RETURN eng_visible_comment(p_tenant, p_id, p_moderator, p_reader);
END $$;

-- The discussion of a comment, locked by taking its next seq (for a write that appends exactly one
-- event): one update instead of a lock and then an update. Unknown comment → 404.
CREATE FUNCTION eng_take_seq_of(p_tenant text, p_id text) RETURNS discussions LANGUAGE plpgsql AS $$
DECLARE
  v_discussion text;
  d discussions;
BEGIN
  SELECT discussion_id INTO v_discussion FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  IF v_discussion IS NULL THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = v_discussion RETURNING * INTO d;
  RETURN d;
END $$;

-- The row as the service reads it back (a Comment with its author), for the API response.
CREATE OR REPLACE FUNCTION eng_comment_row(c comments) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at),
    'author', json_build_object('tenantId', r.tenant_id, 'id', r.id, 'name', r.name, 'avatarUrl', r.avatar_url))
  FROM readers r WHERE r.tenant_id = c.tenant_id AND r.id = c.author_id
$$;

-- Inserts one event with the seq `p_seq` (taken by the caller under the discussion's row lock) and
-- one delivery job per subscribed, verified, enabled endpoint (not for reader-private events).
-- Returns {envelope, audience, readerId, jobs}.
CREATE FUNCTION eng_insert_event(p_tenant text, p_discussion text, p_seq int, p_type text, p_audience text,
                                 p_reader text, p_data json, p_at timestamptz) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_id uuid := gen_random_uuid();
  v_env json;
  v_jobs int := 0;
BEGIN
  v_env := json_build_object('id', v_id, 'seq', p_seq, 'type', p_type, 'tenantId', p_tenant,
                             'discussionId', p_discussion, 'occurredAt', eng_iso(p_at), 'data', p_data);
  INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
  VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env::jsonb, p_at);
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

-- Appends one event to a discussion whose row the caller holds locked: the next seq, then the event.
CREATE OR REPLACE FUNCTION eng_append_event(p_tenant text, p_discussion text, p_type text, p_audience text,
                                            p_reader text, p_data json, p_at timestamptz) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_seq int;
BEGIN
  UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = p_discussion RETURNING seq INTO v_seq;
  RETURN eng_insert_event(p_tenant, p_discussion, v_seq, p_type, p_audience, p_reader, p_data, p_at);
END $$;

-- POST a comment (creates the discussion on first use). The discussion row is locked, its seq taken
-- for comment_created and its commentCount bumped by one upsert; a refusal raised after it rolls
-- the whole statement back.
CREATE OR REPLACE FUNCTION eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text,
  p_avatar text, p_body text, p_parent text, p_status text, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_visible int := CASE WHEN p_status = 'approved' THEN 1 ELSE 0 END;
  d discussions;
  p comments;
  c comments;
  v_comment json;
  v_events json[];
  v_seq int;
BEGIN
  INSERT INTO discussions AS x (tenant_id, id, seq, comment_count, created_at, updated_at)
  VALUES (p_tenant, p_discussion, 1, v_visible, p_at, CASE WHEN v_visible = 1 THEN now() ELSE p_at END)
  ON CONFLICT (tenant_id, id) DO UPDATE
     SET seq = x.seq + 1, comment_count = x.comment_count + v_visible,
         updated_at = CASE WHEN v_visible = 1 THEN now() ELSE x.updated_at END
  RETURNING * INTO d;
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
          p_at, CASE WHEN v_visible = 1 THEN p_at END)
  RETURNING * INTO c;
  v_comment := eng_comment_json_by(c, json_build_object('id', p_reader, 'name', p_name, 'avatarUrl', p_avatar));
  IF v_visible = 1 THEN
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, d.seq, 'comment_created', 'all', NULL,
                                       json_build_object('comment', v_comment), p_at)];
    IF p_parent IS NOT NULL THEN
      UPDATE comments SET reply_count = reply_count + 1 WHERE tenant_id = p_tenant AND id = p_parent;
      -- a reply notification to the parent's author when that is someone else
      IF p.author_id <> p_reader THEN
        UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = p_discussion RETURNING seq INTO v_seq;
        v_events := v_events || eng_insert_event(p_tenant, p_discussion, v_seq, 'notification_reply', 'reader', p.author_id,
          json_build_object('notification', json_build_object('readerId', p.author_id, 'commentId', c.id,
                                                              'parentId', c.parent_id, 'discussionId', c.discussion_id)), p_at);
      END IF;
    END IF;
  ELSE
    -- not public until approved: only the author's own stream hears of it
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, d.seq, 'comment_created', 'reader', p_reader,
                                       json_build_object('comment', v_comment), p_at)];
  END IF;
  RETURN eng_result(c, v_events);
END $$;

-- Toggle a reader's reaction. The discussion row is locked and the event's seq taken by one update
-- (eng_take_seq_of); the comment is then read under that lock. Same refusals as before: unknown or invisible comment
-- 404, not approved 409, locked or archived discussion 409.
CREATE OR REPLACE FUNCTION eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text,
  p_moderator boolean, p_kind text, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
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
END $$;
