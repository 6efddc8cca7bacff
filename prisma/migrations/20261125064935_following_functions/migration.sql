-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone): changed
-- eng_reply_notification(c comments, p_parent_author text, p_at timestamp with time zone): changed
-- eng_follow_enqueue(c comments, p_at timestamp with time zone): new
-- eng_follow_fanout(p_tenant text, p_job uuid, p_token uuid, p_limit integer, p_lease_until timestamp with time zone, p_at timestamp with time zone): new
-- eng_announce(c comments, p_at timestamp with time zone): changed
-- eng_erase_reader_rest(p_tenant text, p_reader text): changed

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
    -- the discussion's followers hear of it after commit (the follow worker): here one job row at most
    PERFORM eng_follow_enqueue(c, p_at);
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
DECLARE
  v_seq int;
BEGIN
  -- a visible reply tells the parent's author, when that is someone else, on their own stream (and by
  -- email: eng_insert_event; and in their inbox); a post announces it, and so does a held reply's first approval (eng_announce)
  IF c.parent_id IS NULL OR p_parent_author IS NULL OR p_parent_author = c.author_id THEN RETURN ARRAY[]::json[]; END IF;
  -- a parent's author who silenced the discussion (subscription `off`, contract section 19) hears of no
  -- reply in it: no inbox item, no notification_reply, no reply email
  IF EXISTS (SELECT 1 FROM discussion_subscriptions WHERE tenant_id = c.tenant_id AND discussion_id = c.discussion_id
                AND reader_id = p_parent_author AND mode = 'off') THEN
    RETURN ARRAY[]::json[];
  END IF;
  -- and keeps it in their inbox (contract section 19), in this same statement, numbered by their own
  -- sequence: the counter's row lock orders their items as they commit
  INSERT INTO inbox_counters AS x (tenant_id, reader_id, seq) VALUES (c.tenant_id, p_parent_author, 1)
  ON CONFLICT (tenant_id, reader_id) DO UPDATE SET seq = x.seq + 1
  RETURNING x.seq INTO v_seq;
  INSERT INTO inbox_items (id, tenant_id, reader_id, seq, type, comment_id, discussion_id, parent_id, created_at)
  VALUES (gen_random_uuid(), c.tenant_id, p_parent_author, v_seq, 'reply', c.id, c.discussion_id, c.parent_id, p_at)
  ON CONFLICT (tenant_id, reader_id, type, comment_id) DO NOTHING;
  RETURN ARRAY[eng_append_event(c.tenant_id, c.discussion_id, 'notification_reply', 'reader', p_parent_author,
    json_build_object('notification', json_build_object('readerId', p_parent_author, 'commentId', c.id,
                                                        'parentId', c.parent_id, 'discussionId', c.discussion_id)), p_at)];
END $function$;

CREATE OR REPLACE FUNCTION public.eng_follow_enqueue(c comments, p_at timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- one probe of the partial index of followers, whatever their number; the fan-out itself is not here
  IF EXISTS (SELECT 1 FROM discussion_subscriptions
              WHERE tenant_id = c.tenant_id AND discussion_id = c.discussion_id AND mode = 'all' AND reader_id <> c.author_id) THEN
    INSERT INTO follow_jobs (id, tenant_id, discussion_id, comment_id, author_id, next_attempt_at, created_at)
    VALUES (gen_random_uuid(), c.tenant_id, c.discussion_id, c.id, c.author_id, p_at, p_at)
    ON CONFLICT (tenant_id, comment_id) DO NOTHING;
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_follow_fanout(p_tenant text, p_job uuid, p_token uuid, p_limit integer, p_lease_until timestamp with time zone, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- One batch of a follow job, in one transaction: the next p_limit followers (by reader id) after the
-- job's `after` get a new_comment item each, numbered by their own inbox sequence (as
-- eng_reply_notification does), and, if they want it, an email item; then the job records the last
-- reader done (or is deleted when no follower is left). Only the claim holding p_token may: a lease
-- lost to another worker answers null. Re-run safe: a follower who has an item of this comment
-- (a reply item too: the reply wins) gets none, so a batch redone after a crash adds nothing twice.
DECLARE
  j follow_jobs;
  v_last text;
  v_seen int;
  v_readers text[];
BEGIN
  SELECT * INTO j FROM follow_jobs WHERE tenant_id = p_tenant AND id = p_job AND claim_token = p_token FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  SELECT max(f.reader_id), count(*)::int INTO v_last, v_seen
    FROM (SELECT reader_id FROM discussion_subscriptions
           WHERE tenant_id = p_tenant AND discussion_id = j.discussion_id AND mode = 'all' AND reader_id > j.after
           ORDER BY reader_id LIMIT p_limit) f;
  WITH f AS (
    SELECT s.reader_id FROM discussion_subscriptions s
     WHERE s.tenant_id = p_tenant AND s.discussion_id = j.discussion_id AND s.mode = 'all' AND s.reader_id > j.after
       AND s.reader_id <= v_last AND s.reader_id <> j.author_id
       AND NOT EXISTS (SELECT 1 FROM inbox_items i WHERE i.tenant_id = p_tenant AND i.reader_id = s.reader_id
                          AND i.type IN ('reply', 'new_comment') AND i.comment_id = j.comment_id)
     ORDER BY s.reader_id
  ), n AS (
    INSERT INTO inbox_counters AS x (tenant_id, reader_id, seq)
    SELECT p_tenant, f.reader_id, 1 FROM f ORDER BY f.reader_id
    ON CONFLICT (tenant_id, reader_id) DO UPDATE SET seq = x.seq + 1
    RETURNING x.reader_id, x.seq
  ), items AS (
    INSERT INTO inbox_items (id, tenant_id, reader_id, seq, type, comment_id, discussion_id, parent_id, created_at)
    SELECT gen_random_uuid(), p_tenant, n.reader_id, n.seq, 'new_comment', j.comment_id, j.discussion_id, NULL, p_at FROM n
    ON CONFLICT (tenant_id, reader_id, type, comment_id) DO NOTHING
    RETURNING reader_id
  ), mail AS (
    -- the email of a new comment (PATCH /me/notifications {"subscriptions"}), queued as a reply's is
    -- (eng_insert_event): `immediate` 2 minutes later, `daily` at the tenant's email.digestHour
    INSERT INTO email_items (id, tenant_id, reader_id, event_id, source, comment_id, discussion_id, mode, due_at, created_at)
    SELECT gen_random_uuid(), p_tenant, r.id, NULL, 'new_comment', j.comment_id, j.discussion_id, r.subscription_emails::text,
           CASE r.subscription_emails WHEN 'immediate' THEN p_at + interval '2 minutes'
                ELSE eng_next_digest(p_at, coalesce((t.settings #>> '{email,digestHour}')::int, 7)) END, p_at
      FROM items JOIN readers r ON r.tenant_id = p_tenant AND r.id = items.reader_id
      JOIN tenants t ON t.id = p_tenant
     WHERE r.subscription_emails IN ('immediate', 'daily') AND r.email IS NOT NULL AND r.email_suppressed_at IS NULL
  )
  SELECT coalesce(array_agg(reader_id), ARRAY[]::text[]) INTO v_readers FROM items;
  IF v_seen < p_limit THEN
    DELETE FROM follow_jobs WHERE tenant_id = p_tenant AND id = p_job;
  ELSE
    UPDATE follow_jobs SET after = v_last, locked_until = p_lease_until WHERE tenant_id = p_tenant AND id = p_job;
  END IF;
  RETURN json_build_object('readers', array_to_json(v_readers), 'done', v_seen < p_limit);
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
  PERFORM eng_follow_enqueue(c, p_at);
  RETURN v_events;
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
  -- and their inbox (items of their own comments in others' inboxes are not listed: author_id is '')
  DELETE FROM inbox_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM inbox_counters WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and the discussions they follow or silenced
  DELETE FROM discussion_subscriptions WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM idempotency_keys k
   WHERE k.tenant_id = p_tenant AND k.status IS NOT NULL
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(k.results) x
                  WHERE x #>> '{row,authorId}' = p_reader OR x #>> '{row,readerId}' = p_reader);
  DELETE FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  GET DIAGNOSTICS v_profile = ROW_COUNT;
  RETURN json_build_object('eventsScrubbed', v_events, 'reports', v_reports, 'profile', v_profile > 0);
END $function$;
