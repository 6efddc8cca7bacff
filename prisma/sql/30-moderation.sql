-- A moderator's approval, rejection and pin (a chat alert's link decides as a moderator does), and the
-- status change the safety rules, reports and bans share; a comment's first approval announces it as
-- a post does.

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
  -- what Akismet is told of it (submit-ham / submit-spam), queued with the change
  PERFORM eng_enqueue_akismet(c, p_to, p_at);
  v_events := eng_change_status(c, p_to, jsonb_strip_nulls(jsonb_build_object('source', 'moderator', 'decision', p_to,
    'previous', CASE WHEN c.moderation_reason ->> 'source' = 'moderator' THEN c.moderation_reason -> 'previous'
                     ELSE c.moderation_reason END)), p_at);
  SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  RETURN eng_result(c, v_events);
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
