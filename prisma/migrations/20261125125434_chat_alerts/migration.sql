-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone): changed
-- eng_report_comment(p_tenant text, p_comment text, p_id text, p_reader text, p_name text, p_avatar text, p_reason text, p_note text, p_threshold integer, p_hold boolean, p_at timestamp with time zone): changed
-- eng_enqueue_alerts(p_tenant text, p_trigger text, p_comment text, p_reason jsonb, p_at timestamp with time zone): new

CREATE OR REPLACE FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_hold integer, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason
DECLARE
  v_status text := p_status;
  v_reason jsonb := p_reason;
  v_earlier int;
  v_visible int;
  v_parent_ok boolean := true;
  v_reader_current boolean;
  v_badge text;
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
  -- the badge in force: a moderator's wins over the claim (written with the reader's row below)
  SELECT CASE WHEN badge_source = 'moderator' THEN badge ELSE p_badge END INTO v_badge
    FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  IF NOT FOUND THEN v_badge := p_badge; END IF;
  IF v_parent_ok THEN
    INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, body_html, status, created_at, published_at, moderation_reason)
    VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, p_body_html, v_status::"CommentStatus",
            p_at, CASE WHEN v_visible = 1 THEN p_at END, v_reason)
    RETURNING * INTO c;
  END IF;
  v_comment := eng_comment_json_by(c, json_build_object('id', p_reader, 'name', p_name, 'avatarUrl', p_avatar, 'badge', v_badge));
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
  PERFORM eng_claim_badge(p_tenant, p_reader, p_badge, p_at);
  -- a held comment alerts the moderators' chats (a hold by the moderation hook is its own trigger)
  IF v_status = 'pending' THEN
    PERFORM eng_enqueue_alerts(p_tenant, CASE WHEN v_reason ->> 'source' = 'hook' THEN 'hook_hold' ELSE 'pending' END,
                               c.id, v_reason, p_at);
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
  RETURN json_build_object('row', eng_comment_row_by(c, p_name, p_avatar, v_badge), 'events', array_to_json(v_events));
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
  -- the report that puts the comment on the reported list alerts the moderators' chats
  IF v_count = p_threshold THEN
    PERFORM eng_enqueue_alerts(p_tenant, 'reported', p_comment,
      jsonb_build_object('source', 'reports', 'reportCount', v_count, 'reasons', v_reasons), p_at);
  END IF;
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

CREATE OR REPLACE FUNCTION public.eng_enqueue_alerts(p_tenant text, p_trigger text, p_comment text, p_reason jsonb, p_at timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- Chat alerts (contract section 21, src/modules/alerts/): one delivery row of kind `alert` for each of
-- the tenant's settings `alerts` whose `on` lists p_trigger (pending | hook_hold | reported), in the
-- transaction of the change itself. The webhook worker claims, sends and retries them as it does
-- webhook jobs; the message (its text, its Approve and Reject links) is made when it is sent.
DECLARE
  v_jobs int;
BEGIN
  INSERT INTO webhook_deliveries (id, tenant_id, kind, alert, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), t.id, 'alert',
         jsonb_build_object('alertId', a ->> 'id', 'trigger', p_trigger, 'commentId', p_comment, 'reason', p_reason),
         p_at, p_at, p_at
    FROM tenants t
   CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(t.settings -> 'alerts') = 'array' THEN t.settings -> 'alerts'
                                                ELSE '[]'::jsonb END) a
   WHERE t.id = p_tenant AND a -> 'on' @> to_jsonb(p_trigger);
  GET DIAGNOSTICS v_jobs = ROW_COUNT;
  RETURN v_jobs;
END $function$;
