-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text): dropped
-- eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone, p_remote_object text, p_remote_actor text): dropped
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone): new
-- eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text): new
-- eng_accept_mention(p_tenant text, p_source text, p_target text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_body_html text, p_status text, p_hold integer, p_published timestamp with time zone, p_at timestamp with time zone): changed
-- eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone): new
-- eng_toggle_remote_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone, p_remote_object text, p_remote_actor text): new

DROP FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text);

DROP FUNCTION public.eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone, p_remote_object text, p_remote_actor text);

CREATE OR REPLACE FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at
-- p_kind: comment (NULL) or mention (a webmention's: eng_accept_mention); p_created_at: when it was
-- written, when that is not now (a mention's `published`)
-- p_status/p_reason: what the body rules, the hook, Akismet and pre-moderation decided for any reader;
-- p_trusted_status/p_trusted_reason: what they decide for a trusted one (banned words alone);
-- p_hold: settings safety.newReaderHold (screening's last steps: eng_screen_comment)
DECLARE
  v_screened jsonb;
  v_status text := p_status;
  v_reason jsonb := p_reason;
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
  -- a moderator's badge wins over the claim (written with the reader's row below)
  v_badge := CASE WHEN r.badge_source = 'moderator' THEN r.badge ELSE p_badge END;
  -- whether the claim changes the badge (eng_claim_badge writes it below, with the reader's row)
  v_badge_claim := NOT v_reader_current OR (r.badge_source IS DISTINCT FROM 'moderator' AND r.badge IS DISTINCT FROM p_badge);
  -- screening's steps 5 to 7 (trust, a shadow ban, the new-reader hold), judged here, in the write
  v_screened := eng_screen_comment(p_tenant, p_reader, 'post', r.trust_level::text, v_shadow, p_status, p_reason,
                                   p_trusted_status, p_trusted_reason, p_hold, NULL);
  IF v_screened IS NOT NULL THEN
    v_status := v_screened ->> 'status';
    v_reason := v_screened -> 'reason';
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
  -- work: npm run bench:pg-cost). Built before the discussion's lock, which is then held for less.
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
  -- 3. under it (an open discussion is writable: eng_assert_writable is asked only about another state)
  IF d.state <> 'open' THEN PERFORM eng_assert_writable(d); END IF;
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
                                       json_build_object('comment', v_comment), p_at, d.federated)];
    IF p_parent IS NOT NULL THEN v_events := v_events || eng_reply_notification(c, p.author_id, p_at); END IF;
  ELSE
    -- not public until approved (a shadow ban's: never): only the author's own stream hears of it
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, v_seq, 'comment_created', 'reader', p_reader,
                                       json_build_object('comment', v_comment), p_at, false)];
  END IF;
  RETURN json_build_object('row', v_row, 'events', array_to_json(v_events));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at
-- A remote reply (the fediverse's inbox): the comment as eng_post_comment posts it, and in the same
-- statement its Note's row in federation_objects (p_remote_object, its id; p_remote_actor, its
-- actor); a Note the tenant holds already is refused, and nothing is written. A function of its own,
-- so that a local post's statement is not one parameter longer.
DECLARE
  v_result json;
BEGIN
  v_result := eng_post_comment(p_tenant, p_discussion, p_id, p_reader, p_name, p_avatar, p_badge, p_body, p_body_html, p_parent,
                               p_status, p_reason, p_trusted_status, p_trusted_reason, p_hold, p_at, p_kind, p_created_at);
  INSERT INTO federation_objects (tenant_id, object_id, kind, comment_id, reader_id, actor_id, created_at)
  VALUES (p_tenant, p_remote_object, 'note', p_id, p_reader, p_remote_actor, p_at)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    PERFORM eng_refuse('409', 'remote_object_held', 'The remote object is held already.');
  END IF;
  RETURN v_result;
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

CREATE OR REPLACE FUNCTION public.eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar
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
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  IF c.status <> 'approved' THEN PERFORM eng_refuse('409', 'comment_not_approved', 'Only approved comments take reactions.'); END IF;
  IF d.state <> 'open' THEN PERFORM eng_assert_writable(d); END IF;
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
    'reaction_toggled', 'all', NULL, json_build_object('reaction', v_result), p_at, false)]));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_toggle_remote_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone, p_remote_object text, p_remote_actor text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar
-- A remote Like (the fediverse's inbox): the reaction toggled as eng_toggle_reaction toggles it, and
-- in the same statement the Like's row in federation_objects (p_remote_object, its id;
-- p_remote_actor, its actor), written as it turns the reaction on, deleted as it turns it off. A
-- function of its own, so that a local toggle's statement is not one parameter longer.
DECLARE
  v_result json;
BEGIN
  v_result := eng_toggle_reaction(p_tenant, p_comment, p_reader, p_name, p_avatar, p_moderator, p_kind, p_at);
  IF (v_result #>> '{row,active}')::boolean THEN
    INSERT INTO federation_objects (tenant_id, object_id, kind, comment_id, reader_id, actor_id, created_at)
    VALUES (p_tenant, p_remote_object, 'like', p_comment, p_reader, p_remote_actor, p_at)
    ON CONFLICT DO NOTHING;
  ELSE
    DELETE FROM federation_objects WHERE tenant_id = p_tenant AND object_id = p_remote_object AND kind = 'like';
  END IF;
  RETURN v_result;
END $function$;
