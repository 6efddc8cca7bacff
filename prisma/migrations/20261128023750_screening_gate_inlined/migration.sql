-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone): changed
-- eng_screening_applies(p_action text, p_trust text, p_shadow boolean, p_hold integer): new
-- eng_screen_comment(p_tenant text, p_reader text, p_action text, p_trust text, p_shadow boolean, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_current text): changed

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
  p comments;
  c comments;
  v_comment json;
  v_row json;
  v_events json[];
BEGIN
  -- 1. outside the discussion's lock, in one statement (each statement is set up by the executor on
  -- every call: npm run bench:pg-cost): the reader's row (their trust, whether their name and avatar
  -- changed, the badge in force), the sanction in force as eng_assert_not_banned finds it (a shadow
  -- ban refuses nothing), whether anyone else follows the discussion with `all` (the probe
  -- eng_follow_enqueue makes, asked here so that the usual post, which nobody follows, runs no other)
  -- and whether the tenant has a webhook endpoint (eng_insert_event's probe, handed to it)
  SELECT rd.id IS NOT NULL AS known, rd.name, rd.avatar_url, rd.badge, rd.badge_source, rd.trust_level::text AS trust,
         sn.found IS NOT NULL AS sanctioned, sn.shadow, sn.until,
         EXISTS (SELECT 1 FROM discussion_subscriptions
                  WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND mode = 'all' AND reader_id <> p_reader) AS followed,
         EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled') AS hooked
    INTO r
    FROM (SELECT) AS one
    LEFT JOIN readers rd ON rd.tenant_id = p_tenant AND rd.id = p_reader
    LEFT JOIN LATERAL (SELECT true AS found, s.shadow, s.until FROM reader_sanctions s
                        WHERE s.tenant_id = p_tenant AND s.reader_id = p_reader AND s.lifted_at IS NULL AND (s.until IS NULL OR s.until > p_at)
                        ORDER BY s.created_at DESC LIMIT 1) sn ON true;
  IF r.sanctioned AND NOT r.shadow THEN PERFORM eng_refuse_banned(r.until); END IF;
  v_shadow := r.sanctioned AND r.shadow;
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
  -- the discussion's followers hear of a visible comment after commit (the follow worker): one job
  -- row at most, written before the discussion's lock so the lock is held no longer for it
  IF v_parent_ok AND v_visible = 1 AND r.followed THEN
    PERFORM eng_follow_enqueue(c, p_at);
  END IF;
  -- 2. the discussion's row: its next seq and count (held from here to the commit: only what needs
  -- the seq or the row follows), answering the three columns read below (a whole row's RETURNING
  -- builds its every column's descriptor: about 1 % of a post, npm run bench:pg-cost)
  INSERT INTO discussions AS x (tenant_id, id, seq, comment_count, created_at, updated_at)
  VALUES (p_tenant, p_discussion, 1, v_visible, p_at, CASE WHEN v_visible = 1 THEN now() ELSE p_at END)
  ON CONFLICT (tenant_id, id) DO UPDATE
     SET seq = x.seq + 1, comment_count = x.comment_count + v_visible,
         updated_at = CASE WHEN v_visible = 1 THEN now() ELSE x.updated_at END
  RETURNING x.seq, x.state, x.federated INTO v_seq, v_state, v_federated;
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
