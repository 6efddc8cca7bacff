-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_has_links(p_html text): new
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone): changed
-- eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_body_html text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_trusted_verdict text, p_trusted_reason jsonb, p_at timestamp with time zone): changed
-- eng_delete_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_at timestamp with time zone): changed
-- eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_marker_html text, p_limit integer, p_at timestamp with time zone): changed

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
  d discussions;
  p comments;
  c comments;
  v_comment json;
  v_row json;
  v_events json[];
BEGIN
  -- 1. outside the discussion's lock, in one statement (each statement is set up by the executor on
  -- every call: npm run bench:pg-cost): the reader's row (their trust, whether their name and avatar
  -- changed, the badge in force), the sanction in force as eng_assert_not_banned finds it (a shadow
  -- ban refuses nothing), and whether anyone else follows the discussion with `all` (the probe
  -- eng_follow_enqueue makes, asked here so that the usual post, which nobody follows, runs no other)
  SELECT rd.id IS NOT NULL AS known, rd.name, rd.avatar_url, rd.badge, rd.badge_source, rd.trust_level::text AS trust,
         sn.found IS NOT NULL AS sanctioned, sn.shadow, sn.until,
         EXISTS (SELECT 1 FROM discussion_subscriptions
                  WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND mode = 'all' AND reader_id <> p_reader) AS followed
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
  v_screened := eng_screen_comment(p_tenant, p_reader, 'post', r.trust, v_shadow, p_status, p_reason,
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

CREATE OR REPLACE FUNCTION public.eng_edit_comment(p_tenant text, p_id text, p_reader text, p_moderator boolean, p_body text, p_body_html text, p_window_seconds integer, p_verdict text, p_reason jsonb, p_trusted_verdict text, p_trusted_reason jsonb, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_verdict, p_reason, p_trusted_verdict, p_trusted_reason
-- p_trusted_*: the verdict for a trusted reader (banned words alone; contract section 21)
DECLARE
  d discussions;
  c comments;
  v_trust text;
  v_screened jsonb;
  v_reason jsonb;
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
  -- screening's steps 5 and 8 (trust, an edit never loosens), judged here, in the write
  SELECT trust_level::text INTO v_trust FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  v_screened := eng_screen_comment(p_tenant, p_reader, 'edit', v_trust, false, p_verdict, p_reason,
                                   p_trusted_verdict, p_trusted_reason, 0, c.status::text);
  v_to := v_screened ->> 'status';
  v_reason := v_screened -> 'reason';
  UPDATE comments SET body = p_body, body_html = p_body_html, has_links = eng_has_links(p_body_html), edited_at = p_at, revision = revision + 1,
         moderation_reason = CASE WHEN v_to IS NULL AND v_reason IS NOT NULL THEN v_reason ELSE moderation_reason END
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
  UPDATE comments SET status = 'deleted', body = '', body_html = '', has_links = false, pinned = false, deleted_at = p_at, revision = revision + 1
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

CREATE OR REPLACE FUNCTION public.eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_marker_html text, p_limit integer, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
DECLARE
  d discussions;
  c comments;
  rx record;
  v_events json[] := ARRAY[]::json[];
  v_ids text[] := ARRAY[]::text[];
  v_was_visible boolean;
  v_anonymized int := 0;
  v_removed int := 0;
  v_tombstones int := 0;
  v_reactions int := 0;
  v_votes int := 0;
  v_scrubbed int := 0;
  v_n int;
  v_counts jsonb;
BEGIN
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = p_discussion FOR UPDATE;
  -- d.seq: the events before this batch's own comment_deleted ones, which carry nothing to scrub
  INSERT INTO readers (tenant_id, id, name, avatar_url, created_at, updated_at)
  VALUES (p_tenant, '', '[erased]', NULL, p_at, p_at) ON CONFLICT (tenant_id, id) DO NOTHING;
  FOR c IN SELECT * FROM comments
            WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND author_id = p_reader
            ORDER BY depth DESC, id LIMIT p_limit LOOP
    v_ids := v_ids || c.id;
    v_was_visible := c.status = 'approved';
    IF p_delete THEN
      UPDATE comments SET status = 'deleted', body = '', body_html = '', has_links = false, pinned = false, deleted_at = COALESCE(deleted_at, p_at),
             author_id = '', author_name = NULL, moderation_reason = NULL
       WHERE tenant_id = p_tenant AND id = c.id RETURNING * INTO c;
      IF v_was_visible THEN PERFORM eng_shift_visibility(c, -1); END IF;
    ELSE
      UPDATE comments SET body = CASE WHEN status = 'deleted' THEN '' ELSE p_marker END,
             body_html = CASE WHEN status = 'deleted' THEN '' ELSE p_marker_html END,
             has_links = status <> 'deleted' AND eng_has_links(p_marker_html), author_id = '', author_name = NULL, moderation_reason = NULL
       WHERE tenant_id = p_tenant AND id = c.id RETURNING * INTO c;
    END IF;
    -- readers' streams and webhooks are told as for a deletion (eng_delete_comment's event)
    v_events := v_events || eng_append_event(p_tenant, p_discussion, 'comment_deleted',
      CASE WHEN v_was_visible OR (c.status = 'deleted' AND c.published_at IS NOT NULL) THEN 'all' ELSE 'moderators' END,
      NULL, json_build_object('comment', eng_comment_json(c)), p_at);
    IF p_delete AND NOT EXISTS (SELECT 1 FROM comments WHERE tenant_id = p_tenant AND parent_id = c.id) THEN
      DELETE FROM comments WHERE tenant_id = p_tenant AND id = c.id;
      v_removed := v_removed + 1;
    ELSIF p_delete THEN
      v_tombstones := v_tombstones + 1;
    ELSE
      v_anonymized := v_anonymized + 1;
    END IF;
  END LOOP;
  IF cardinality(v_ids) > 0 THEN
    -- their search documents go now, in the erasure's own transaction (the search projector, which
    -- follows the comment_deleted events above, would make none again: eng_search_has_document)
    DELETE FROM comment_search WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND comment_id = ANY (v_ids);
    -- every event that carried one of these comments: no body, no author left in a replay or a delivery
    -- (the log keeps its envelopes as json text: each is read into jsonb once, OFFSET 0 keeping the
    -- subquery's column one value, and written back as json)
    WITH x AS MATERIALIZED (
      SELECT s.id, s.occurred_at, s.p FROM (SELECT id, occurred_at, payload::jsonb AS p FROM events
                                             WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND seq <= d.seq OFFSET 0) s
       WHERE s.p #>> '{data,comment,id}' = ANY (v_ids))
    UPDATE events e
       SET payload = jsonb_set(jsonb_set(jsonb_set(x.p, '{data,comment,author}',
                                                   '{"id":"","name":"[erased]","avatarUrl":null,"badge":null}'::jsonb),
                                         '{data,comment,body}',
                                         to_jsonb(CASE WHEN p_delete OR x.p #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker END)),
                               '{data,comment,bodyHtml}',
                               to_jsonb(CASE WHEN p_delete OR x.p #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker_html END))::json,
           reader_id = CASE WHEN e.reader_id = p_reader THEN '' ELSE e.reader_id END
      FROM x
     WHERE e.id = x.id AND e.occurred_at = x.occurred_at;
    GET DIAGNOSTICS v_scrubbed = ROW_COUNT;
  END IF;
  IF cardinality(v_ids) < p_limit THEN
    FOR rx IN SELECT r.comment_id, r.kind FROM comments x JOIN reactions r ON r.comment_id = x.id AND r.reader_id = p_reader
               WHERE x.tenant_id = p_tenant AND x.discussion_id = p_discussion LOOP
      DELETE FROM reactions WHERE comment_id = rx.comment_id AND reader_id = p_reader AND kind = rx.kind;
      SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = rx.comment_id;
      v_n := COALESCE((c.reaction_counts ->> rx.kind)::int, 0) - 1;
      v_counts := CASE WHEN v_n > 0 THEN c.reaction_counts || jsonb_build_object(rx.kind, v_n) ELSE c.reaction_counts - rx.kind END;
      UPDATE comments SET reaction_counts = v_counts,
             reaction_total = (SELECT COALESCE(sum(value::int), 0) FROM jsonb_each_text(v_counts))
       WHERE tenant_id = p_tenant AND id = rx.comment_id;
      v_reactions := v_reactions + 1;
    END LOOP;
    -- their page reactions on this discussion, and its counts without them
    v_n := v_reactions;
    v_counts := d.reaction_counts;
    FOR rx IN DELETE FROM page_reactions WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND reader_id = p_reader RETURNING kind LOOP
      v_counts := CASE WHEN COALESCE((v_counts ->> rx.kind)::int, 0) > 1 THEN v_counts || jsonb_build_object(rx.kind, (v_counts ->> rx.kind)::int - 1)
                       ELSE v_counts - rx.kind END;
      v_reactions := v_reactions + 1;
    END LOOP;
    IF v_reactions > v_n THEN
      UPDATE discussions SET reaction_counts = v_counts WHERE tenant_id = p_tenant AND id = p_discussion;
    END IF;
    -- the reader's votes go, and the tallies they counted in (eng_shift_votes, as a vote taken back)
    FOR rx IN DELETE FROM votes v USING comments x
               WHERE x.tenant_id = p_tenant AND x.discussion_id = p_discussion AND v.comment_id = x.id AND v.reader_id = p_reader
               RETURNING v.comment_id, v.value LOOP
      SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = rx.comment_id;
      PERFORM eng_shift_votes(c, rx.value, 0);
      v_votes := v_votes + 1;
    END LOOP;
  END IF;
  RETURN json_build_object('row', json_build_object('anonymized', v_anonymized, 'removed', v_removed, 'tombstones', v_tombstones,
                                                    'reactions', v_reactions, 'votes', v_votes, 'eventsScrubbed', v_scrubbed,
                                                    'done', cardinality(v_ids) < p_limit),
                           'events', COALESCE(array_to_json(v_events), '[]'::json));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_has_links(p_html text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  -- whether a comment's rendered body shows a link (an <a> with an href: what safety.maxLinks counts
  -- and search's hasLinks filters on), written into comments.has_links by every statement that writes
  -- body_html (a post, an edit, a deletion, an erasure, the import, the start-up render)
  SELECT COALESCE(p_html, '') ~ '<a [^>]*href='
$function$;
