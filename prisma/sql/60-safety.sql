-- Reader reports (a threshold may hold the comment) and reader bans (which may reject the reader's
-- pending comments), with the JSON each answers with.

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

CREATE OR REPLACE FUNCTION public.eng_report_json(r comment_reports)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object('id', r.id, 'commentId', r.comment_id, 'reason', r.reason, 'note', r.note, 'status', r.status,
    'createdAt', eng_iso(r.created_at))
$function$;

CREATE OR REPLACE FUNCTION public.eng_ban_reader(p_tenant text, p_reader text, p_id text, p_until timestamp with time zone, p_reason text, p_shadow boolean, p_by text, p_reject_pending boolean, p_at timestamp with time zone)
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
  INSERT INTO reader_sanctions (id, tenant_id, reader_id, until, reason, shadow, created_by, created_at)
  VALUES (p_id, p_tenant, p_reader, p_until, p_reason, p_shadow, p_by, p_at)
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

CREATE OR REPLACE FUNCTION public.eng_sanction_json(s reader_sanctions)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object('until', eng_iso(s.until), 'reason', s.reason, 'shadow', s.shadow, 'createdAt', eng_iso(s.created_at))
$function$;
