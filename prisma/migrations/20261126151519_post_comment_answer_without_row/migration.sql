-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone): changed
-- eng_accept_mention(p_tenant text, p_source text, p_target text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_body_html text, p_status text, p_hold integer, p_published timestamp with time zone, p_at timestamp with time zone): changed

CREATE OR REPLACE FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at
-- p_kind: comment (NULL) or mention (a webmention's: eng_accept_mention); p_created_at: when it was
-- written, when that is not now (a mention's `published`)
-- p_status/p_reason: what the body rules, the hook, Akismet and pre-moderation decided for any reader;
-- p_trusted_status/p_trusted_reason: what they decide for a trusted one (banned words alone)
DECLARE
  v_status text := p_status;
  v_reason jsonb := p_reason;
  v_trust text;
  v_shadow boolean;
  r readers;
  c_shown comments;
  v_earlier int;
  v_visible int;
  v_parent_ok boolean := true;
  v_reader_current boolean;
  v_badge text;
  v_badge_claim boolean;
  v_seq int;
  d discussions;
  p comments;
  c comments;
  v_comment json;
  v_row json;
  v_events json[];
BEGIN
  -- 1. outside the discussion's lock: the sanction in force (a shadow ban refuses nothing) and the
  -- reader's row, read once (their trust, whether their name and avatar changed, the badge in force)
  v_shadow := eng_assert_not_banned(p_tenant, p_reader, p_at);
  SELECT * INTO r FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  v_reader_current := FOUND AND r.name IS NOT DISTINCT FROM p_name AND r.avatar_url IS NOT DISTINCT FROM p_avatar;
  v_trust := r.trust_level::text;
  -- a moderator's badge wins over the claim (written with the reader's row below)
  v_badge := CASE WHEN r.badge_source = 'moderator' THEN r.badge ELSE p_badge END;
  -- whether the claim changes the badge (eng_claim_badge writes it below, with the reader's row)
  v_badge_claim := NOT v_reader_current OR (r.badge_source IS DISTINCT FROM 'moderator' AND r.badge IS DISTINCT FROM p_badge);
  -- the reader's trust and a shadow ban (contract section 21), judged here, in the write
  IF v_trust = 'trusted' THEN
    v_status := p_trusted_status;
    v_reason := p_trusted_reason;
  ELSIF v_trust = 'premoderated' AND v_status = 'approved' THEN
    v_status := 'pending';
    v_reason := jsonb_build_object('source', 'trust', 'trustLevel', 'premoderated');
  END IF;
  IF v_shadow AND v_status <> 'rejected' THEN
    v_status := 'rejected';
    v_reason := jsonb_build_object('source', 'shadow_ban');
  END IF;
  IF p_hold > 0 AND v_reason IS NULL AND v_status <> 'rejected' AND v_trust IS DISTINCT FROM 'trusted'
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
  IF v_parent_ok THEN
    INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, body_html, status, kind, created_at, published_at, moderation_reason)
    VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, p_body_html, v_status::"CommentStatus",
            COALESCE(p_kind, 'comment')::"CommentKind", COALESCE(p_created_at, p_at), CASE WHEN v_visible = 1 THEN p_at END, v_reason)
    RETURNING * INTO c;
  END IF;
  -- a shadow-banned reader is answered (and their stream told) as if the comment were published
  c_shown := c;
  IF eng_is_shadowed(c) THEN
    c_shown := eng_shadow_shown(c);
  END IF;
  v_comment := eng_comment_json_by(c_shown, json_build_object('id', p_reader, 'name', p_name, 'avatarUrl', p_avatar, 'badge', v_badge));
  -- the answer's row: the event's comment and the three members a comment's row has beyond it (the
  -- rest are a new comment's defaults: src/modules/comments/dto.ts, commentFromPosted), not the row
  -- built member by member again (eng_comment_row_by: 30 members, a fifth of this function's JSON
  -- work, issue 51). Built before the discussion's lock, which is then held for less.
  v_row := json_build_object('comment', v_comment, 'depth', c_shown.depth, 'publishedAt', eng_iso(c_shown.published_at),
                             'moderationReason', c_shown.moderation_reason);
  -- the discussion's followers hear of a visible comment after commit (the follow worker): one job
  -- row at most, written before the discussion's lock so the lock is held no longer for it
  IF v_parent_ok AND v_visible = 1 THEN
    PERFORM eng_follow_enqueue(c, p_at);
  END IF;
  -- 2. the discussion's row: its next seq and count (held from here to the commit: only what needs
  -- the seq or the row follows)
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
      -- a shadow-banned reader may answer their own shadow-banned comment (which they see as published)
      SELECT pc.status = 'approved' OR (v_shadow AND pc.author_id = p_reader AND eng_is_shadowed(pc))
        INTO v_parent_ok FROM comments pc WHERE pc.tenant_id = p_tenant AND pc.id = p_parent;
    END IF;
    IF NOT v_parent_ok THEN
      PERFORM eng_refuse('422', 'parentId', 'must be the id of a visible comment of this discussion');
    END IF;
  END IF;
  IF NOT v_reader_current THEN
    PERFORM eng_write_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  END IF;
  IF v_badge_claim THEN
    PERFORM eng_claim_badge(p_tenant, p_reader, p_badge, p_at);
  END IF;
  -- a held comment alerts the moderators' chats (a hold by the moderation hook is its own trigger)
  IF v_status = 'pending' THEN
    PERFORM eng_enqueue_alerts(p_tenant, CASE WHEN v_reason ->> 'source' = 'hook' THEN 'hook_hold' ELSE 'pending' END,
                               c.id, v_reason, p_at);
  END IF;
  IF v_visible = 1 THEN
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, v_seq, 'comment_created', 'all', NULL,
                                       json_build_object('comment', v_comment), p_at)];
    IF p_parent IS NOT NULL THEN v_events := v_events || eng_reply_notification(c, p.author_id, p_at); END IF;
  ELSE
    -- not public until approved (a shadow ban's: never): only the author's own stream hears of it
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, v_seq, 'comment_created', 'reader', p_reader,
                                       json_build_object('comment', v_comment), p_at)];
  END IF;
  RETURN json_build_object('row', v_row, 'events', array_to_json(v_events));
END $function$;

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
                                 p_status, NULL, 'approved', NULL, p_hold, p_at, 'mention', p_published);
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
