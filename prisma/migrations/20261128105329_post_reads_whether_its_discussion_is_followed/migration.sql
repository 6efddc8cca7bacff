-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone): changed

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
  r record;
  c_shown comments;
  v_earlier int;
  v_visible int;
  v_parent_ok boolean := true;
  v_reader_current boolean;
  v_badge text;
  v_badge_claim boolean;
  v_seq int;
  v_state "DiscussionState";
  v_federated boolean;
  v_followed boolean;
  p comments;
  c comments;
  v_comment json;
  v_row json;
  v_events json[];
BEGIN
  -- 1. outside the discussion's lock, in one statement (each statement is set up by the executor on
  -- every call: npm run bench:pg-cost): the reader's row (their trust, whether their name and avatar
  -- changed, the badge in force, until when a sanction may be in force) and whether the tenant has a
  -- webhook endpoint (eng_insert_event's probe, handed to it)
  SELECT rd.id IS NOT NULL AS known, rd.name, rd.avatar_url, rd.badge, rd.badge_source, rd.trust_level::text AS trust,
         COALESCE(rd.sanctioned_until > p_at, false) AS sanctioned,
         EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled') AS hooked
    INTO r
    FROM (SELECT) AS one
    LEFT JOIN readers rd ON rd.tenant_id = p_tenant AND rd.id = p_reader;
  -- the sanction in force, looked for only while the reader's row says one may be (a ban refuses the
  -- post; a shadow ban refuses nothing: eng_assert_not_banned)
  v_shadow := CASE WHEN r.sanctioned THEN eng_assert_not_banned(p_tenant, p_reader, p_at) ELSE false END;
  v_reader_current := r.known AND r.name IS NOT DISTINCT FROM p_name AND r.avatar_url IS NOT DISTINCT FROM p_avatar;
  -- a moderator's badge wins over the claim (written with the reader's row below)
  v_badge := CASE WHEN r.badge_source = 'moderator' THEN r.badge ELSE p_badge END;
  -- whether the claim changes the badge (eng_claim_badge writes it below, with the reader's row)
  v_badge_claim := NOT v_reader_current OR (r.badge_source IS DISTINCT FROM 'moderator' AND r.badge IS DISTINCT FROM p_badge);
  -- screening's steps 5 to 7 (trust, a shadow ban, the new-reader hold), judged here, in the write
  -- (called only when a step can apply: the usual post skips the call)
  IF eng_screening_applies('post', r.trust, v_shadow, p_hold) THEN
    v_screened := eng_screen_comment(p_tenant, p_reader, 'post', r.trust, v_shadow, p_status, p_reason,
                                     p_trusted_status, p_trusted_reason, p_hold, NULL);
  END IF;
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
    INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, body_html, has_links, status, kind, created_at, published_at, moderation_reason)
    VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, p_body_html, eng_has_links(p_body_html), v_status::"CommentStatus",
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
  -- 2. the discussion's row: its next seq and count (held from here to the commit: only what needs
  -- the seq or the row follows), answering the four columns read below (a whole row's RETURNING
  -- builds its every column's descriptor: about 1 % of a post, npm run bench:pg-cost)
  INSERT INTO discussions AS x (tenant_id, id, seq, comment_count, created_at, updated_at)
  VALUES (p_tenant, p_discussion, 1, v_visible, p_at, CASE WHEN v_visible = 1 THEN now() ELSE p_at END)
  ON CONFLICT (tenant_id, id) DO UPDATE
     SET seq = x.seq + 1, comment_count = x.comment_count + v_visible,
         updated_at = CASE WHEN v_visible = 1 THEN now() ELSE x.updated_at END
  RETURNING x.seq, x.state, x.federated, x.followed INTO v_seq, v_state, v_federated, v_followed;
  -- 3. under it (an open discussion is writable: eng_assert_writable is asked only about another state)
  IF v_state <> 'open' THEN PERFORM eng_assert_writable(x) FROM discussions x WHERE x.tenant_id = p_tenant AND x.id = p_discussion; END IF;
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
  -- the discussion's followers hear of a visible comment after commit (the follow worker): one job row
  -- at most, asked for only in a discussion someone has followed (its row says so: no probe otherwise)
  IF v_followed AND v_visible = 1 THEN
    PERFORM eng_follow_enqueue(c, p_at);
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
                                       json_build_object('comment', v_comment), p_at, v_federated, r.hooked)];
    IF p_parent IS NOT NULL THEN v_events := v_events || eng_reply_notification(c, p.author_id, p_at); END IF;
  ELSE
    -- not public until approved (a shadow ban's: never): only the author's own stream hears of it
    v_events := ARRAY[eng_insert_event(p_tenant, p_discussion, v_seq, 'comment_created', 'reader', p_reader,
                                       json_build_object('comment', v_comment), p_at, false, r.hooked)];
  END IF;
  RETURN json_build_object('row', v_row, 'events', array_to_json(v_events));
END $function$;
