-- Posting, editing and deleting a comment, then what they build: the counts a visible comment
-- shifts, the write's result (the comment's row with its author) and the comment's JSON, which every
-- event carrying a comment holds as data.comment (the REST shape; src/events/write-results.ts declares it).

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

CREATE OR REPLACE FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_comment text, p_event_members text, p_at_text text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at, p_comment, p_event_members, p_at_text
-- p_kind: comment (NULL) or mention (a webmention's: eng_accept_mention); p_created_at: when it was
-- written, when that is not now (a mention's `published`)
-- What the request built as JSON text, so that the database neither builds nor parses it (the
-- comment's JSON built here cost a post 100,000 instructions: docs/scaling.md, "The envelope as text"):
-- p_comment: the new comment as eng_comment_json_by shows it, with p_status and p_badge
--   (src/modules/comments/dto.ts, newCommentText), used when the write decides the same (no screening
--   step applies, no moderator's badge), else built here; NULL: built here;
-- p_event_members: the event's envelope members eng_envelope_members makes (NULL: made here);
-- p_at_text: p_at as a JSON string, the answer's publishedAt of a visible comment the request built.
-- Answers as every write (its row and events), as JSON text.
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
  v_visible int;
  v_parent_ok boolean := true;
  v_seq int;
  v_state "DiscussionState";
  v_federated boolean;
  v_followed boolean;
  v_jobs_due boolean;
  v_new boolean;
  v_decided boolean;
  p comments;
  c comments;
  v_comment text;
  v_row text;
  v_eid uuid := gen_random_uuid();
  v_env text;
  v_jobs int;
  v_more json[];
BEGIN
  -- 1. outside the discussion's lock, in one statement (each statement is set up by the executor on
  -- every call, and each test or assignment of this function costs a post about 2,000 instructions:
  -- npm run bench:pg-cost, so what can be read here is): from the reader's row, their trust, until
  -- when a sanction may be in force, whether their row is as the identity says (else eng_write_reader
  -- writes it below), the badge a moderator set (which wins over the claim) and whether the
  -- claim changes it (eng_claim_badge writes it below, with the reader's row); and whether the tenant
  -- has a webhook endpoint (the probe, handed to eng_event_jobs). The reader's row alone, not
  -- joined to a row that is always there (that join's set-up cost a post 12,000 instructions more than
  -- this and the branch of a first post): a reader's first post finds none (no sanction, no moderator's
  -- badge, the probe left to eng_event_jobs).
  SELECT rd.trust_level::text AS trust, rd.sanctioned_until > p_at AS sanctioned,
         CASE WHEN rd.badge_source = 'moderator' THEN rd.badge END AS moderator_badge,
         rd.name IS NOT DISTINCT FROM p_name AND rd.avatar_url IS NOT DISTINCT FROM p_avatar AS current,
         rd.name IS DISTINCT FROM p_name OR rd.avatar_url IS DISTINCT FROM p_avatar
           OR (rd.badge_source IS DISTINCT FROM 'moderator' AND rd.badge IS DISTINCT FROM p_badge) AS badge_claim,
         EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled') AS hooked
    INTO r
    FROM readers rd WHERE rd.tenant_id = p_tenant AND rd.id = p_reader;
  -- The sanction in force (a ban refuses the post; a shadow ban refuses nothing: eng_assert_not_banned),
  -- looked for only while the reader's row says one may be (eng_reader_sanctioned_until keeps that true
  -- of every row, whoever inserts it), or when they have no row: their first post, or their first since
  -- an erasure, which a sanction outlives. Without a row, theirs is written and their badge claimed
  -- below, under the discussion's lock (v_new; the members of r are NULL, which the tests read as false).
  IF NOT FOUND THEN
    v_new := true;
    v_shadow := eng_assert_not_banned(p_tenant, p_reader, p_at);
  ELSE
    v_shadow := CASE WHEN r.sanctioned THEN eng_assert_not_banned(p_tenant, p_reader, p_at) ELSE false END;
  END IF;
  -- screening's steps 5 to 7 (trust, a shadow ban, the new-reader hold), judged here, in the write
  -- (called only when a step can apply: the usual post skips the call)
  IF eng_screening_applies('post', r.trust, v_shadow, p_hold) THEN
    v_screened := eng_screen_comment(p_tenant, p_reader, 'post', r.trust, v_shadow, p_status, p_reason,
                                     p_trusted_status, p_trusted_reason, p_hold, NULL);
  END IF;
  IF v_screened IS NOT NULL THEN
    v_status := v_screened ->> 'status';
    v_reason := v_screened -> 'reason';
    v_decided := v_status <> p_status OR v_reason IS DISTINCT FROM p_reason;
  END IF;
  v_visible := CASE WHEN v_status = 'approved' THEN 1 ELSE 0 END;
  IF p_parent IS NOT NULL THEN
    SELECT * INTO p FROM comments WHERE tenant_id = p_tenant AND id = p_parent;
    v_parent_ok := p.id IS NOT NULL AND p.discussion_id = p_discussion;
  END IF;
  IF v_parent_ok THEN
    INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, body_html, has_links, status, kind, created_at, published_at, moderation_reason)
    VALUES (p_id, p_tenant, p_discussion, p_parent, COALESCE(p.depth + 1, 0), p_reader, p_body, p_body_html, eng_has_links(p_body_html), v_status::"CommentStatus",
            COALESCE(p_kind, 'comment')::"CommentKind", COALESCE(p_created_at, p_at), CASE WHEN v_visible = 1 THEN p_at END, v_reason);
  END IF;
  -- the comment's JSON and the answer's row (the event's comment and the three members a comment's
  -- row has beyond it: the rest are a new comment's defaults, src/modules/comments/dto.ts,
  -- commentFromPosted), as text, built before the discussion's lock, which is then held for less:
  -- built here when the write decided otherwise than the request assumed (a screening step changed
  -- the status or the reason, a moderator's badge wins over the claim) or the request built none, a
  -- shadow-banned reader answered (and their stream told) as if the comment were published; else
  -- the request's. The new row is read back (into c) only where a step needs it whole: the JSON built
  -- here, a reply's notification, a follow (its RETURNING * cost the usual post 35,000 instructions,
  -- and a record's assignment about 10,000: npm run bench:pg-cost).
  IF v_decided OR p_comment IS NULL OR r.moderator_badge IS NOT NULL THEN
    SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
    c_shown := CASE WHEN eng_is_shadowed(c) THEN eng_shadow_shown(c) ELSE c END;
    v_comment := eng_comment_json_by(c_shown, json_build_object('id', p_reader, 'name', p_name, 'avatarUrl', p_avatar,
                                                                'badge', COALESCE(r.moderator_badge, p_badge)))::text;
    v_row := '{"comment":' || v_comment || ',"depth":' || c_shown.depth || ',"publishedAt":'
             || COALESCE(to_json(eng_iso(c_shown.published_at))::text, 'null')
             || ',"moderationReason":' || COALESCE(c_shown.moderation_reason::text, 'null') || '}';
  ELSE
    v_comment := p_comment;
    v_row := '{"comment":' || p_comment || ',"depth":' || COALESCE(p.depth + 1, 0) || ',"publishedAt":' || CASE WHEN v_visible = 1 THEN p_at_text ELSE 'null' END
             || ',"moderationReason":' || COALESCE(v_reason::text, 'null') || '}';
    IF p_parent IS NOT NULL THEN
      SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
    END IF;
  END IF;
  -- 2. the discussion's row: its next seq and count (held from here to the commit: only what needs
  -- the seq or the row follows), answering the four columns read below (a whole row's RETURNING
  -- builds its every column's descriptor: about 1 % of a post, npm run bench:pg-cost)
  INSERT INTO discussions AS x (tenant_id, id, seq, comment_count, created_at, updated_at)
  VALUES (p_tenant, p_discussion, 1, v_visible, p_at, CASE WHEN v_visible = 1 THEN now() ELSE p_at END)
  ON CONFLICT (tenant_id, id) DO UPDATE
     SET seq = x.seq + 1, comment_count = x.comment_count + v_visible,
         updated_at = CASE WHEN v_visible = 1 THEN now() ELSE x.updated_at END
  RETURNING x.seq, x.state, x.federated, x.followed, x.federated OR COALESCE(r.hooked, true)
       INTO v_seq, v_state, v_federated, v_followed, v_jobs_due;
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
  -- a reader's first post writes their row and claims their badge
  IF v_new THEN
    PERFORM eng_write_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
    PERFORM eng_claim_badge(p_tenant, p_reader, p_badge, p_at);
  END IF;
  -- the rarer steps, behind one test (the usual post takes none of them; each test costs a post about
  -- 2,000 instructions, one of four members 8,000)
  IF v_followed OR r.badge_claim OR v_status = 'pending' THEN
    -- the discussion's followers hear of a visible comment after commit (the follow worker): one job
    -- row at most, asked for only in a discussion someone has followed (its row says so: no probe otherwise)
    IF v_followed AND v_visible = 1 THEN
      IF c.id IS NULL THEN
        SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
      END IF;
      PERFORM eng_follow_enqueue(c, p_at);
    END IF;
    IF NOT r.current THEN
      PERFORM eng_write_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
    END IF;
    IF r.badge_claim THEN
      PERFORM eng_claim_badge(p_tenant, p_reader, p_badge, p_at);
    END IF;
    -- a held comment alerts the moderators' chats (a hold by the moderation hook is its own trigger)
    IF v_status = 'pending' THEN
      PERFORM eng_enqueue_alerts(p_tenant, CASE WHEN v_reason ->> 'source' = 'hook' THEN 'hook_hold' ELSE 'pending' END,
                                 p_id, v_reason, p_at);
    END IF;
  END IF;
  -- its event, appended here as eng_log_event appends one (that call cost a post 58,000 instructions:
  -- npm run bench:pg-cost), its jobs enqueued by eng_event_jobs when the tenant may have an endpoint
  -- (a first post's reader row could not say: asked there) or the discussion is federated
  -- (v_jobs_due, answered by the discussion's upsert: one plain test here, where a test of three
  -- members cost a post about 10,000)
  IF p_event_members IS NULL THEN
    p_event_members := eng_envelope_members(p_tenant, p_discussion, 'comment_created', p_at);
  END IF;
  v_env := '{"id":"' || v_eid || '","seq":' || v_seq || ',' || p_event_members || ',"data":{"comment":' || v_comment || '}}';
  IF v_visible = 1 THEN
    INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, envelope, occurred_at)
    VALUES (v_eid, p_tenant, p_discussion, v_seq, 'comment_created', 'all', NULL, v_env, p_at);
    IF v_jobs_due THEN
      v_jobs := eng_event_jobs(p_tenant, p_discussion, v_seq, 'comment_created', v_eid, '{"comment":' || v_comment || '}', p_at,
                               v_federated, r.hooked);
    END IF;
    v_env := '{"envelope":' || v_env || ',"audience":"all","readerId":null,"jobs":' || COALESCE(v_jobs, 0) || '}';
    IF p_parent IS NOT NULL THEN
      v_more := eng_reply_notification(c, p.author_id, p_at);
      IF cardinality(v_more) > 0 THEN v_env := v_env || ',' || array_to_string(v_more, ','); END IF;
    END IF;
  ELSE
    -- not public until approved (a shadow ban's: never): only the author's own stream hears of it (no jobs)
    INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, envelope, occurred_at)
    VALUES (v_eid, p_tenant, p_discussion, v_seq, 'comment_created', 'reader', p_reader, v_env, p_at);
    v_env := '{"envelope":' || v_env || ',"audience":"reader","readerId":' || to_json(p_reader) || ',"jobs":0}';
  END IF;
  RETURN '{"row":' || v_row || ',"events":[' || v_env || ']}';
END $function$;

CREATE OR REPLACE FUNCTION public.eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_comment text, p_event_members text, p_at_text text, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at, p_comment, p_event_members, p_at_text, p_remote_actor, p_remote_hash
-- A reply from another network, posted as eng_post_comment posts a comment, and in the same statement
-- the row that ties it to its original, so that it is never brought in twice (one held already is
-- refused, and nothing is written). A function of its own, so that a local post's statement is not
-- longer. p_network:
--   fediverse: a remote Note (the inbox, contract section 24): p_remote_id its id, p_remote_actor its
--              actor, kept in federation_objects;
--   bluesky:   a reply to a linked post (src/modules/bluesky/, contract section 30), of kind bluesky:
--              p_remote_id its at:// URI, p_remote_hash the URI's sha256 (which outlives an erasure),
--              kept in bluesky_replies.
DECLARE
  v_result text;
BEGIN
  v_result := eng_post_comment(p_tenant, p_discussion, p_id, p_reader, p_name, p_avatar, p_badge, p_body, p_body_html, p_parent,
                               p_status, p_reason, p_trusted_status, p_trusted_reason, p_hold, p_at,
                               CASE WHEN p_network = 'bluesky' THEN 'bluesky' ELSE p_kind END, p_created_at,
                               p_comment, p_event_members, p_at_text);
  IF p_network = 'bluesky' THEN
    INSERT INTO bluesky_replies (tenant_id, uri_hash, uri, discussion_id, comment_id, reader_id, created_at)
    VALUES (p_tenant, p_remote_hash, p_remote_id, p_discussion, p_id, p_reader, p_at)
    ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO federation_objects (tenant_id, object_id, kind, comment_id, reader_id, actor_id, created_at)
    VALUES (p_tenant, p_remote_id, 'note', p_id, p_reader, p_remote_actor, p_at)
    ON CONFLICT DO NOTHING;
  END IF;
  IF NOT FOUND THEN
    PERFORM eng_refuse('409', 'remote_object_held', 'The remote object is held already.');
  END IF;
  RETURN v_result;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_reply_notification(c comments, p_parent_author text, p_at timestamp with time zone)
 RETURNS json[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_seq int;
BEGIN
  -- a visible reply tells the parent's author, when that is someone else, on their own stream (and by
  -- email: eng_log_event; and in their inbox); a post announces it, and so does a held reply's first approval (eng_announce)
  IF c.parent_id IS NULL OR p_parent_author IS NULL OR p_parent_author = c.author_id THEN RETURN ARRAY[]::json[]; END IF;
  -- a parent's author who silenced the discussion (subscription `off`, contract section 19) hears of no
  -- reply in it: no inbox item, no notification_reply, no reply email
  IF EXISTS (SELECT 1 FROM discussion_subscriptions WHERE tenant_id = c.tenant_id AND discussion_id = c.discussion_id
                AND reader_id = p_parent_author AND mode = 'off') THEN
    RETURN ARRAY[]::json[];
  END IF;
  -- and keeps it in their inbox (contract section 19), in this same statement, numbered by their own
  -- sequence: the counter's row lock orders their items as they commit
  INSERT INTO inbox_counters AS x (tenant_id, reader_id, seq) VALUES (c.tenant_id, p_parent_author, 1)
  ON CONFLICT (tenant_id, reader_id) DO UPDATE SET seq = x.seq + 1
  RETURNING x.seq INTO v_seq;
  INSERT INTO inbox_items (id, tenant_id, reader_id, seq, type, comment_id, discussion_id, parent_id, created_at)
  VALUES (gen_random_uuid(), c.tenant_id, p_parent_author, v_seq, 'reply', c.id, c.discussion_id, c.parent_id, p_at)
  ON CONFLICT (tenant_id, reader_id, type, comment_id) DO NOTHING;
  RETURN ARRAY[eng_append_event(c.tenant_id, c.discussion_id, 'notification_reply', 'reader', p_parent_author,
    json_build_object('notification', json_build_object('readerId', p_parent_author, 'commentId', c.id,
                                                        'parentId', c.parent_id, 'discussionId', c.discussion_id)), p_at)];
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

CREATE OR REPLACE FUNCTION public.eng_shift_visibility(c comments, p_delta integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE discussions SET comment_count = comment_count + p_delta, updated_at = now()
   WHERE tenant_id = c.tenant_id AND id = c.discussion_id;
  IF c.parent_id IS NOT NULL THEN
    UPDATE comments SET reply_count = reply_count + p_delta WHERE tenant_id = c.tenant_id AND id = c.parent_id;
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_result(c comments, p_events json[])
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object('row', eng_comment_row(c), 'events', COALESCE(array_to_json(p_events), '[]'::json))
$function$;

CREATE OR REPLACE FUNCTION public.eng_comment_row(c comments)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = c.tenant_id AND id = c.author_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN eng_comment_row_by(c, COALESCE(c.author_name, r.name), r.avatar_url, r.badge);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_comment_row_by(c comments, p_name text, p_avatar text, p_badge text)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'authorName', c.author_name, 'body', c.body, 'bodyHtml', c.body_html, 'status', c.status,
    'kind', c.kind, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at), 'moderationReason', c.moderation_reason::json,
    'upvotes', c.upvotes, 'downvotes', c.downvotes, 'score', c.score, 'voteBest', c.vote_best,
    'author', json_build_object('tenantId', c.tenant_id, 'id', c.author_id, 'name', p_name, 'avatarUrl', p_avatar, 'badge', p_badge))
$function$;

CREATE OR REPLACE FUNCTION public.eng_comment_json(c comments)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = c.tenant_id AND id = c.author_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN eng_comment_json_by(c, json_build_object('id', r.id, 'name', COALESCE(c.author_name, r.name), 'avatarUrl', r.avatar_url, 'badge', r.badge));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_comment_json_by(c comments, p_author json)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'id', c.id, 'discussionId', c.discussion_id, 'parentId', c.parent_id, 'author', p_author,
    'body', c.body, 'bodyHtml', c.body_html, 'status', c.status, 'pinned', c.pinned,
    'editedAt', CASE WHEN c.edited_at IS NULL THEN NULL ELSE eng_iso(c.edited_at) END,
    'createdAt', eng_iso(c.created_at), 'reactions', c.reaction_counts::json, 'replyCount', c.reply_count,
    'score', c.score, 'upvotes', c.upvotes, 'downvotes', c.downvotes, 'kind', c.kind)
$function$;
