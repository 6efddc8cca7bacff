-- DropForeignKey
ALTER TABLE "comments" DROP CONSTRAINT "comments_tenant_id_author_id_fkey";

-- DropForeignKey
ALTER TABLE "comments" DROP CONSTRAINT "comments_tenant_id_discussion_id_fkey";

-- DropForeignKey
ALTER TABLE "events" DROP CONSTRAINT "events_tenant_id_discussion_id_fkey";

-- DropForeignKey
ALTER TABLE "reactions" DROP CONSTRAINT "reactions_tenant_id_reader_id_fkey";

-- A post's comment row is written BEFORE the discussion's row lock is taken (issue "hot paths").
-- Under a hot discussion every post waits for the one before it to commit, so what runs between
-- taking the discussion's row and committing caps a discussion's posts per second. The foreign keys
-- dropped above made that impossible or dear: inserting a comment took KEY SHARE on the discussion
-- row (taken before the update by many posts at once, a MultiXact on the hottest row) and on the
-- reader's row (a lock on the reader for every post; a reaction's foreign key to its reader did the
-- same on every toggle). Nothing deletes discussions or readers
-- (comments are soft-deleted; retention deletes old events, the referring side); the write functions,
-- the only writers of comments, reactions and events, create the discussion and the reader in the same
-- statement as the comment, so the references still hold (test/write-integrity.test.ts).
--
-- eng_post_comment now runs in this order:
--   1. outside the lock: read the reader (no lock) and the parent's immutable facts (discussion,
--      depth, author), insert the comment, build its JSON;
--   2. take the discussion (upsert: seq + count) — the lock;
--   3. under it: writable?, the parent still approved (and its reply count), the reader written only
--      when new or changed (discussion-then-reader order, as every write function), the events.
-- A refusal raised at any step rolls the whole statement back, the early insert included. A parent
-- that is unknown or of another discussion skips step 1's insert so the refusals come in the same
-- order as before (archived/locked first, then parentId).

-- The row as the service reads it back (a Comment with its author) when the author is at hand.
CREATE FUNCTION eng_comment_row_by(c comments, p_name text, p_avatar text) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at),
    'author', json_build_object('tenantId', c.tenant_id, 'id', c.author_id, 'name', p_name, 'avatarUrl', p_avatar))
$$;

CREATE OR REPLACE FUNCTION eng_comment_row(c comments) RETURNS json LANGUAGE plpgsql STABLE AS $$
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = c.tenant_id AND id = c.author_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN eng_comment_row_by(c, r.name, r.avatar_url);
END $$;

-- Whether the reader of an identity assertion exists with this name and avatar (a read, no lock).
CREATE FUNCTION eng_reader_current(p_tenant text, p_reader text, p_name text, p_avatar text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  RETURN FOUND AND r.name IS NOT DISTINCT FROM p_name AND r.avatar_url IS NOT DISTINCT FROM p_avatar;
END $$;

-- Writes the reader of an assertion that is not current: inserted on first sight, else its name and
-- avatar updated (a concurrent writer may have made it current meanwhile: then nothing is written).
CREATE FUNCTION eng_write_reader(p_tenant text, p_reader text, p_name text, p_avatar text, p_at timestamptz)
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

-- The reader of an identity assertion, written only when it is new or changed: an unchanged
-- reader's row is neither written nor locked.
CREATE OR REPLACE FUNCTION eng_touch_reader(p_tenant text, p_reader text, p_name text, p_avatar text, p_at timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT eng_reader_current(p_tenant, p_reader, p_name, p_avatar) THEN
    PERFORM eng_write_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  END IF;
END $$;

-- Inserts one event with a seq the caller took under the discussion's row lock, and one delivery
-- job per subscribed, verified, enabled endpoint (not for reader-private events), in one statement.
-- Returns {envelope, audience, readerId, jobs}.
CREATE OR REPLACE FUNCTION eng_insert_event(p_tenant text, p_discussion text, p_seq int, p_type text, p_audience text,
                                            p_reader text, p_data json, p_at timestamptz) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_id uuid := gen_random_uuid();
  v_env json := json_build_object('id', v_id, 'seq', p_seq, 'type', p_type, 'tenantId', p_tenant,
                                  'discussionId', p_discussion, 'occurredAt', eng_iso(p_at), 'data', p_data);
  v_jobs int := 0;
BEGIN
  WITH e AS (
    INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
    VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env::jsonb, p_at)
  )
  INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), w.tenant_id, w.id, v_id, p_at, p_at, p_at
    FROM webhook_endpoints w
   WHERE p_audience <> 'reader' AND p_type <> 'notification_reply'
     AND w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'
     AND (w.events @> ARRAY[p_type]::text[] OR w.events @> ARRAY['*']::text[]);
  GET DIAGNOSTICS v_jobs = ROW_COUNT;
  RETURN json_build_object('envelope', v_env, 'audience', p_audience, 'readerId', p_reader, 'jobs', v_jobs);
END $$;

-- POST a comment (creates the discussion on first use); see the order above.
CREATE OR REPLACE FUNCTION eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text,
  p_avatar text, p_body text, p_parent text, p_status text, p_at timestamptz) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_visible int := CASE WHEN p_status = 'approved' THEN 1 ELSE 0 END;
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
  IF p_parent IS NOT NULL THEN
    SELECT * INTO p FROM comments WHERE tenant_id = p_tenant AND id = p_parent;
    v_parent_ok := p.id IS NOT NULL AND p.discussion_id = p_discussion;
  END IF;
  v_reader_current := eng_reader_current(p_tenant, p_reader, p_name, p_avatar);
  IF v_parent_ok THEN
    INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, status, created_at, published_at)
    VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, p_status::"CommentStatus",
            p_at, CASE WHEN v_visible = 1 THEN p_at END)
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
