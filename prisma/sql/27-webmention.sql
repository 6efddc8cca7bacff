-- Webmention (contract section 24; src/modules/webmention/): a verified mention becomes a comment of
-- kind `mention` by the reader `wm:<source origin>`, posted as any comment is (eng_post_comment: the
-- same moderation, counts, events and webhook jobs); a re-sent one edits that same comment
-- (eng_edit_comment); a source gone (410) or no longer linking deletes it (eng_delete_comment). The
-- webmentions row (tenant, source, target) is locked first, so two verifications of one mention
-- cannot post two comments.

CREATE OR REPLACE FUNCTION public.eng_accept_mention(p_tenant text, p_source text, p_target text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_body_html text, p_status text, p_hold integer, p_published timestamp with time zone, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_published
DECLARE
  w webmentions;
  c comments;
  v_result json;
  v_id text;
BEGIN
  SELECT * INTO w FROM webmentions WHERE tenant_id = p_tenant AND source = p_source AND target = p_target FOR UPDATE;
  IF w.comment_id IS NOT NULL THEN
    SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = w.comment_id;
  END IF;
  IF c.id IS NOT NULL AND c.status <> 'deleted' THEN
    -- the same mention again: its author's name and photo as the source says now, its text if it changed
    PERFORM eng_write_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
    IF c.body = p_body AND c.body_html IS NOT DISTINCT FROM p_body_html THEN
      v_result := eng_result(c, ARRAY[]::json[]);
    ELSE
      v_result := eng_edit_comment(p_tenant, c.id, p_reader, false, p_body, p_body_html, 0, NULL, NULL, NULL, NULL, p_at);
    END IF;
    v_id := c.id;
  ELSE
    -- a trusted source site (a moderator's trust level for its reader) is published at once
    v_result := eng_post_comment(p_tenant, p_discussion, p_id, p_reader, p_name, p_avatar, NULL, p_body, p_body_html, NULL,
                                 p_status, NULL, 'approved', NULL, p_hold, p_at, 'mention', p_published, NULL, NULL, NULL)::json;
    -- eng_post_comment answers its event's comment and three members more; a mention answers the
    -- comment's whole row, as the other branches do
    SELECT eng_result(x, ARRAY(SELECT json_array_elements(v_result -> 'events'))) INTO v_result
      FROM comments x WHERE x.tenant_id = p_tenant AND x.id = p_id;
    v_id := p_id;
  END IF;
  INSERT INTO webmentions AS x (tenant_id, source, target, discussion_id, comment_id, status, error, received_at, verified_at)
  VALUES (p_tenant, p_source, p_target, p_discussion, v_id, 'accepted', NULL, p_at, p_at)
  ON CONFLICT (tenant_id, source, target) DO UPDATE
     SET comment_id = v_id, status = 'accepted', error = NULL, verified_at = p_at;
  RETURN v_result;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_remove_mention(p_tenant text, p_source text, p_target text, p_status text, p_error text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- p_status: removed (410, or the link gone) | rejected (it never qualified); the comment it became, if
-- any, is deleted as a moderator deletes one. Answers the deleted comment's result, or NULL row and no events.
DECLARE
  w webmentions;
  v_result json;
BEGIN
  SELECT * INTO w FROM webmentions WHERE tenant_id = p_tenant AND source = p_source AND target = p_target FOR UPDATE;
  UPDATE webmentions SET status = p_status, error = p_error, verified_at = p_at
   WHERE tenant_id = p_tenant AND source = p_source AND target = p_target;
  IF w.comment_id IS NOT NULL AND EXISTS (SELECT 1 FROM comments WHERE tenant_id = p_tenant AND id = w.comment_id AND status <> 'deleted') THEN
    v_result := eng_delete_comment(p_tenant, w.comment_id, NULL, true, p_at);
  END IF;
  RETURN COALESCE(v_result, json_build_object('row', NULL, 'events', '[]'::json));
END $function$;
