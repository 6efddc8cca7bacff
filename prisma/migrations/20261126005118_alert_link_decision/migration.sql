-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_body_html text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_trusted_verdict text, p_trusted_reason jsonb, p_at timestamp with time zone): changed
-- eng_delete_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_at timestamp with time zone): changed
-- eng_decide_by_alert_link(p_tenant text, p_id text, p_to text, p_revision integer, p_link text, p_links text[], p_at timestamp with time zone): new
-- eng_change_status(c comments, p_to text, p_reason jsonb, p_at timestamp with time zone): changed
-- eng_report_comment(p_tenant text, p_comment text, p_id text, p_reader text, p_name text, p_avatar text, p_reason text, p_note text, p_threshold integer, p_hold boolean, p_at timestamp with time zone): changed
-- eng_enqueue_alerts(p_tenant text, p_trigger text, p_comment text, p_reason jsonb, p_at timestamp with time zone): changed

CREATE OR REPLACE FUNCTION public.eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_body_html text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_trusted_verdict text, p_trusted_reason jsonb, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_verdict, p_reason, p_trusted_verdict, p_trusted_reason
-- p_trusted_*: the verdict for a trusted reader (banned words alone; contract section 21)
DECLARE
  d discussions;
  c comments;
  v_verdict text := p_verdict;
  v_reason jsonb := p_reason;
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
  IF EXISTS (SELECT 1 FROM readers WHERE tenant_id = p_tenant AND id = p_reader AND trust_level = 'trusted') THEN
    v_verdict := p_trusted_verdict;
    v_reason := p_trusted_reason;
  END IF;
  v_to := CASE WHEN v_verdict = 'rejected' AND c.status <> 'rejected' THEN 'rejected'
               WHEN v_verdict = 'pending' AND c.status = 'approved' THEN 'pending' END;
  UPDATE comments SET body = p_body, body_html = p_body_html, edited_at = p_at, revision = revision + 1,
         moderation_reason = CASE WHEN v_verdict IS NOT NULL AND v_verdict = c.status::text THEN v_reason ELSE moderation_reason END
   WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  IF v_to IS NOT NULL THEN
    v_events := eng_change_status(c, v_to, v_reason, p_at);
    SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  END IF;
  IF eng_is_shadowed(c) THEN
    -- a shadow ban's comment: only its author hears of the edit, as of a published comment's
    RETURN eng_result(c, v_events || eng_append_event(p_tenant, c.discussion_id, 'comment_edited', 'reader', c.author_id,
      json_build_object('comment', eng_comment_json(eng_shadow_shown(c))), p_at));
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
  v_was_shadow boolean;
BEGIN
  c := eng_locked_comment(p_tenant, p_id, p_moderator, p_reader);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF NOT p_moderator AND c.author_id IS DISTINCT FROM p_reader THEN
    PERFORM eng_refuse('403', 'not_author', 'Only the author or a moderator may delete this comment.');
  END IF;
  IF c.status = 'deleted' THEN RETURN eng_result(c, ARRAY[]::json[]); END IF;
  PERFORM eng_assert_not_archived(d);
  v_was_visible := c.status = 'approved';
  v_was_shadow := eng_is_shadowed(c);
  UPDATE comments SET status = 'deleted', body = '', body_html = '', pinned = false, deleted_at = p_at, revision = revision + 1
   WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO c;
  IF v_was_visible THEN PERFORM eng_shift_visibility(c, -1); END IF;
  IF v_was_shadow THEN
    -- a shadow ban's comment: only its author hears of it
    RETURN eng_result(c, ARRAY[eng_append_event(p_tenant, c.discussion_id, 'comment_deleted', 'reader', c.author_id,
      json_build_object('comment', eng_comment_json(c)), p_at)]);
  END IF;
  RETURN eng_result(c, ARRAY[eng_append_event(p_tenant, c.discussion_id, 'comment_deleted',
    CASE WHEN v_was_visible THEN 'all' ELSE 'moderators' END, NULL, json_build_object('comment', eng_comment_json(c)), p_at)]);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_decide_by_alert_link(p_tenant text, p_id text, p_to text, p_revision integer, p_link text, p_links text[], p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- A chat alert's Approve or Reject link used (src/modules/alerts/engine/link-actions.ts): p_link is the
-- hash of the link's token, p_links the hashes of both of its alert's links (one decision). Under the
-- discussion's lock, as every change of the comment: both links are spent at once, and only when
-- neither was (so of two uses, on any instances, one decides and the other finds them spent); then
-- the comment is approved or rejected as by a moderator (eng_set_comment_status) only if it is still
-- at p_revision, the revision its alert was queued at: one decided since (a moderator, another link,
-- a rule, reports, an edit, a deletion) is left as it is. Answers `spent` (false: the links were used
-- or expired, nothing was written) and `acted` beside the comment's row. Rolled back whole when the
-- action refuses (an archived discussion): the links stay unspent.
DECLARE
  c comments;
  v_spent int;
  v_result json;
BEGIN
  PERFORM eng_lock_discussion_of(p_tenant, p_id);
  SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  UPDATE sign_in_tokens SET used_at = p_at
   WHERE tenant_id = p_tenant AND kind = 'alert_link' AND token_hash = ANY(p_links) AND p_link = ANY(p_links)
     AND used_at IS NULL AND expires_at > p_at
     AND NOT EXISTS (SELECT 1 FROM sign_in_tokens u WHERE u.tenant_id = p_tenant AND u.kind = 'alert_link'
                                                     AND u.token_hash = ANY(p_links) AND u.used_at IS NOT NULL);
  GET DIAGNOSTICS v_spent = ROW_COUNT;
  IF v_spent = 0 OR c.status = 'deleted' OR c.revision <> p_revision THEN
    RETURN json_build_object('row', json_build_object('spent', v_spent > 0, 'acted', false, 'comment', eng_comment_row(c)),
                             'events', '[]'::json);
  END IF;
  v_result := eng_set_comment_status(p_tenant, p_id, p_to, p_at);
  RETURN json_build_object('row', json_build_object('spent', true, 'acted', true, 'comment', v_result -> 'row'),
                           'events', v_result -> 'events');
END $function$;

CREATE OR REPLACE FUNCTION public.eng_change_status(c comments, p_to text, p_reason jsonb, p_at timestamp with time zone)
 RETURNS json[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_was_visible boolean := c.status = 'approved';
  v_first boolean := p_to = 'approved' AND c.published_at IS NULL;
  v_events json[] := ARRAY[]::json[];
BEGIN
  UPDATE comments SET status = p_to::"CommentStatus", published_at = CASE WHEN v_first THEN p_at ELSE published_at END,
         moderation_reason = p_reason, revision = revision + 1
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
  -- the report that puts the comment on the reported list alerts the moderators' chats (after the
  -- hold: the alert's links act on the comment as it is held)
  IF v_count = p_threshold THEN
    PERFORM eng_enqueue_alerts(p_tenant, 'reported', p_comment,
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
-- webhook jobs; the message (its text, its Approve and Reject links) is made when it is sent. Each
-- row keeps the comment's revision as it is now, after the change: the links act only on that one
-- (eng_decide_by_alert_link).
DECLARE
  v_jobs int;
  v_revision int := (SELECT revision FROM comments WHERE tenant_id = p_tenant AND id = p_comment);
BEGIN
  INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), t.id, 'alert',
         jsonb_build_object('alertId', a ->> 'id', 'trigger', p_trigger, 'commentId', p_comment, 'reason', p_reason,
                            'revision', v_revision),
         p_at, p_at, p_at
    FROM tenants t
   CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(t.settings -> 'alerts') = 'array' THEN t.settings -> 'alerts'
                                                ELSE '[]'::jsonb END) a
   WHERE t.id = p_tenant AND a -> 'on' @> to_jsonb(p_trigger);
  GET DIAGNOSTICS v_jobs = ROW_COUNT;
  RETURN v_jobs;
END $function$;
