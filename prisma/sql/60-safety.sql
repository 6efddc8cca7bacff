-- Reader reports (a threshold may hold the comment) and reader bans (which may reject the reader's
-- pending comments), with the JSON each answers with; and screening's last steps, which a post and
-- an edit ask in their own statement (eng_screen_comment).

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
  -- the reader's row says until when it may be in force (a post looks for it only then); locked after
  -- the discussions, as a post locks its discussion before the reader's row
  UPDATE readers SET sanctioned_until = COALESCE(p_until, 'infinity') WHERE tenant_id = p_tenant AND id = p_reader;
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

CREATE OR REPLACE FUNCTION public.eng_screening_applies(p_action text, p_trust text, p_shadow boolean, p_hold integer)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- whether any of screening's steps 5 to 8 (eng_screen_comment, below) can change what a write is
  -- handed: not for the usual post, by a reader of the default level, not shadow-banned, with no
  -- new-reader hold. A post asks this before it calls eng_screen_comment: this check is inlined into
  -- the caller's expression, where a PL/pgSQL function's call costs a post about 1.7 % of its
  -- PostgreSQL work even when it answers at once (npm run bench:pg-cost)
  SELECT NOT (p_action = 'post' AND p_trust IS NOT DISTINCT FROM 'default' AND p_shadow IS NOT TRUE AND p_hold = 0)
$function$;

CREATE OR REPLACE FUNCTION public.eng_screen_comment(p_tenant text, p_reader text, p_action text, p_trust text, p_shadow boolean, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_current text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
-- Screening's last steps, the ones the write's own statement decides from the reader's row as it is
-- then (and, for an edit, the comment under the discussion's lock): steps 5 to 8 of the one ordered
-- list, SCREENING in src/modules/comments/screening.ts, which runs steps 1 to 4 before the write and
-- names these here in the same order and by the same names. eng_post_comment (p_action 'post') and
-- eng_edit_comment ('edit') call it alike. p_status/p_reason: what steps 1 to 4 decided for any
-- reader (an edit's verdict: NULL when nothing objected); p_trusted_*: a trusted reader's (banned
-- words alone); p_trust: the reader's trust level (NULL: no row yet); p_shadow: a shadow ban in force
-- (eng_assert_not_banned); p_hold: settings safety.newReaderHold (0 for an edit); p_current: the
-- edited comment's status.
-- Answers NULL when no step changes what it is handed: a post keeps p_status and p_reason, an edit
-- changes neither the comment's status nor its reason. Else {status, reason}: a post's status and
-- reason; an edit's status to move the comment to (null: it stays) and the reason to record
-- (absent: the comment's stays). (The arguments are its variables: a function called once a
-- statement pays for every expression it evaluates, so the usual post asks one question.)
DECLARE
  v_earlier int;
BEGIN
  -- the usual post, by a reader of the default level, not shadow-banned, with no hold: no step applies
  IF NOT eng_screening_applies(p_action, p_trust, p_shadow, p_hold) THEN RETURN NULL; END IF;
  -- 5. trust (post, edit): a trusted reader's comment takes the trusted verdict; a premoderated
  -- reader's new comment that would be approved is held
  IF p_trust = 'trusted' THEN
    p_status := p_trusted_status;
    p_reason := p_trusted_reason;
  ELSIF p_trust = 'premoderated' AND p_action = 'post' AND p_status = 'approved' THEN
    p_status := 'pending';
    p_reason := jsonb_build_object('source', 'trust', 'trustLevel', 'premoderated');
  END IF;
  IF p_action = 'post' THEN
    -- 6. shadowBan (post): stored rejected, shown to its author as published
    IF p_shadow AND p_status <> 'rejected' THEN
      p_status := 'rejected';
      p_reason := jsonb_build_object('source', 'shadow_ban');
    END IF;
    -- 7. newReaderHold (post): a comment no step gave a reason for, by a reader not trusted with no
    -- published comment and fewer than p_hold earlier ones, is held. (The probe of the reader's
    -- published comments is a statement of its own, run only when the hold can apply: a condition
    -- holding a subquery is set up by the executor even when it is not reached.)
    IF p_hold > 0 AND p_reason IS NULL AND p_status <> 'rejected' AND p_trust IS DISTINCT FROM 'trusted' THEN
      IF NOT EXISTS (SELECT 1 FROM comments WHERE tenant_id = p_tenant AND author_id = p_reader AND published_at IS NOT NULL) THEN
        SELECT count(*) INTO v_earlier FROM (SELECT 1 FROM comments WHERE tenant_id = p_tenant AND author_id = p_reader LIMIT p_hold) x;
        IF v_earlier < p_hold THEN
          p_status := 'pending';
          p_reason := jsonb_build_object('source', 'new_reader', 'newReaderHold', p_hold, 'earlierComments', v_earlier);
        END IF;
      END IF;
    END IF;
  ELSE
    -- 8. editNeverLoosens (edit): a published comment held or rejected leaves the readers' view, a
    -- held one can be rejected; a verdict equal to the comment's status records its reason again
    IF p_status IS NULL THEN
      RETURN NULL;
    ELSIF p_status = p_current THEN
      p_status := NULL;
    ELSIF NOT ((p_status = 'rejected' AND p_current <> 'rejected') OR (p_status = 'pending' AND p_current = 'approved')) THEN
      RETURN NULL;
    END IF;
  END IF;
  IF p_reason IS NULL THEN RETURN jsonb_build_object('status', p_status); END IF;
  RETURN jsonb_build_object('status', p_status, 'reason', p_reason);
END $function$;
