-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone): dropped
-- eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text): dropped
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_comment text, p_event_members text, p_at_text text): new
-- eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_comment text, p_event_members text, p_at_text text, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text): new
-- eng_reply_notification(c comments, p_parent_author text, p_at timestamp with time zone): changed
-- eng_accept_mention(p_tenant text, p_source text, p_target text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_body text, p_body_html text, p_status text, p_hold integer, p_published timestamp with time zone, p_at timestamp with time zone): changed
-- eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone, p_federated boolean, p_hooked boolean): changed
-- eng_envelope_members(p_tenant text, p_discussion text, p_type text, p_at timestamp with time zone): new
-- eng_log_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_members text, p_data text, p_at timestamp with time zone, p_federated boolean, p_hooked boolean): new
-- eng_event_jobs(p_tenant text, p_discussion text, p_seq integer, p_type text, p_event uuid, p_data text, p_at timestamp with time zone, p_federated boolean, p_hooked boolean): new
-- eng_search_project(p_tenants text[], p_discussions text[], p_limit integer): changed
-- eng_create_event_log(): changed
-- eng_erase_reader_batch(p_tenant text, p_reader text, p_discussion text, p_delete boolean, p_marker text, p_marker_html text, p_limit integer, p_at timestamp with time zone): changed
-- eng_erase_reader_rest(p_tenant text, p_reader text): changed

DROP FUNCTION public.eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone);

DROP FUNCTION public.eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text);

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

CREATE OR REPLACE FUNCTION public.eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone, p_federated boolean, p_hooked boolean)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_reader, p_hooked
-- An event whose data the write built as json (every write but a post): eng_log_event, its answer as json.
BEGIN
  RETURN eng_log_event(p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader,
                       eng_envelope_members(p_tenant, p_discussion, p_type, p_at), p_data::text, p_at, p_federated, p_hooked)::json;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_log_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_members text, p_data text, p_at timestamp with time zone, p_federated boolean, p_hooked boolean)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
-- nullable: p_reader, p_hooked
-- The event appended to the log and its effects enqueued (eng_event_jobs, the one place a write's
-- jobs are). The envelope is text, made here of its id and seq, p_members (eng_envelope_members, or
-- what a request built the same way) and p_data (the event's `data`, JSON text), and stored as it is:
-- the database never parses it here (a json column would validate it on every insert:
-- docs/scaling.md, "The envelope as text"). Answers the event as the write results carry it
-- (src/events/write-results.ts, appendedEvent), as JSON text. A post appends its comment_created
-- event itself, the same way (eng_post_comment: this call cost it 58,000 instructions).
-- p_hooked: whether the tenant has an endpoint that may take a webhook, when the caller has asked
-- already; NULL: asked here
DECLARE
  v_id uuid := gen_random_uuid();
  v_env text := '{"id":"' || v_id || '","seq":' || p_seq || ',' || p_members || ',"data":' || p_data || '}';
  v_jobs int;
BEGIN
  INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, envelope, occurred_at)
  VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env, p_at);
  IF p_audience <> 'reader' AND p_type <> 'notification_reply' THEN
    -- its webhook and ActivityPub jobs, asked for only when the tenant has an endpoint or the
    -- discussion is federated (the probe, a statement of its own, only when the caller has not asked;
    -- written out where it is asked: a SQL function holding a subquery is not inlined, and its call
    -- plans it again in every transaction)
    IF p_hooked IS NULL THEN
      p_hooked := EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled');
    END IF;
    IF p_hooked OR p_federated THEN
      v_jobs := eng_event_jobs(p_tenant, p_discussion, p_seq, p_type, v_id, p_data, p_at, p_federated, p_hooked);
    END IF;
  ELSIF p_type = 'notification_reply' THEN
    -- a reply email for the parent's author (contract section 15), in the reply's own transaction: when
    -- the reader has an address that is not suppressed and wants reply emails (their choice, else the
    -- tenant's email.defaultReplies, 'off' by default). `immediate` waits 2 minutes so that replies in
    -- that window go out as one message; `daily` waits for the tenant's email.digestHour (UTC, 7 by default).
    PERFORM eng_queue_email(p_tenant, 'reply', v_id, p_data::json #>> '{notification,commentId}', p_discussion, ARRAY[p_reader], ARRAY[x.mode],
                            ARRAY[CASE x.mode WHEN 'immediate' THEN p_at + interval '2 minutes' ELSE eng_next_digest(p_at, x.hour) END], p_at)
      FROM (SELECT coalesce(r.reply_emails::text, t.settings #>> '{email,defaultReplies}', 'off') AS mode,
                   coalesce((t.settings #>> '{email,digestHour}')::int, 7) AS hour
              FROM readers r JOIN tenants t ON t.id = r.tenant_id
             WHERE r.tenant_id = p_tenant AND r.id = p_reader AND r.email IS NOT NULL AND r.email_suppressed_at IS NULL) x
     WHERE x.mode IN ('immediate', 'daily');
  END IF;
  RETURN '{"envelope":' || v_env || ',"audience":"' || p_audience || '","readerId":' || COALESCE(to_json(p_reader)::text, 'null')
         || ',"jobs":' || COALESCE(v_jobs, 0) || '}';
END $function$;

CREATE OR REPLACE FUNCTION public.eng_event_jobs(p_tenant text, p_discussion text, p_seq integer, p_type text, p_event uuid, p_data text, p_at timestamp with time zone, p_federated boolean, p_hooked boolean)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- nullable: p_hooked
-- The outbound queue's jobs of a public event (not a reader's own, not a reply notification), the one
-- place a write's webhook and ActivityPub jobs are enqueued, called by eng_log_event and by a post
-- (eng_post_comment) when the tenant may have an endpoint or the discussion is federated. Each insert
-- runs only when it has rows to write: an INSERT's set-up (the jobs table and its indexes opened)
-- costs a write about 4 % of its PostgreSQL work even when it inserts nothing (npm run bench:pg-cost).
-- The same transaction's snapshot rules as one statement: an endpoint verified while the write runs
-- may or may not get the event. p_hooked NULL: asked here. Answers the jobs queued.
DECLARE
  v_data json;
  v_jobs int;
  v_fanout int;
BEGIN
  IF p_hooked IS NULL THEN
    p_hooked := EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled');
  END IF;
  -- its webhook jobs, one for each endpoint that takes it
  IF p_hooked THEN
    INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
    SELECT gen_random_uuid(), w.tenant_id, w.id, p_event, p_at, p_at, p_at
      FROM webhook_endpoints w
     WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'
       AND (w.events @> ARRAY[p_type]::text[] OR w.events @> ARRAY['*']::text[]);
    GET DIAGNOSTICS v_jobs = ROW_COUNT;
  END IF;
  -- a federated discussion's comment event: one job that makes it into its activity and that
  -- activity's deliveries (src/modules/federation/engine/outbound.ts), with what it needs of the
  -- event (the event's data parsed for it: only here)
  IF p_federated AND p_type IN ('comment_created', 'comment_approved', 'comment_edited', 'comment_deleted', 'comment_rejected') THEN
    v_data := p_data::json;
    INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
    VALUES (gen_random_uuid(), p_tenant, 'activitypub_fanout',
            jsonb_build_object('discussionId', p_discussion, 'seq', p_seq, 'event', jsonb_build_object(
              'type', p_type, 'commentId', v_data #>> '{comment,id}', 'status', v_data #>> '{comment,status}',
              'authorId', v_data #>> '{comment,author,id}')),
            p_at, p_at, p_at);
    v_fanout := 1;
  END IF;
  RETURN COALESCE(v_jobs, 0) + COALESCE(v_fanout, 0);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_search_project(p_tenants text[], p_discussions text[], p_limit integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- One step of the projector over the discussions (p_tenants[i], p_discussions[i]), of every tenant, in
-- two statements whatever their number (a step over many discussions costs the database little more
-- than a step over one: npm run bench): their position rows made at 0 where missing (in the same order); then, in one
-- statement, the rows locked in one order (two projectors given the same discussions wait for each
-- other, never a deadlock, and the second finds the positions the first left: each event is applied
-- once), each discussion's events after its position up to its head read (at most p_limit a
-- discussion; the rest left to the next step), the documents of the comments they name made again
-- from their rows, the positions moved past them. The head and the events are read in one snapshot:
-- every event up to a head it sees has committed and is in it. Events the log no longer holds (its
-- retention dropped their days while the projector was behind) leave the changed comments unknown:
-- such a discussion is left where it is and answered in `gaps`, for eng_search_rebuild to make its
-- documents again from its comments (a statement of its own, with a longer limit: a whole
-- discussion's). Answers {"events": events passed, "more": [[tenant, discussion], …] left for the
-- next step, "gaps": [[tenant, discussion], …], "lags": seconds from each applied event's time to now}.
DECLARE
  v_result json;
BEGIN
  INSERT INTO search_positions (tenant_id, discussion_id, seq)
  SELECT DISTINCT u.t, u.d, 0 FROM unnest(p_tenants, p_discussions) AS u(t, d) ORDER BY u.t, u.d
  ON CONFLICT DO NOTHING;
  WITH locked AS MATERIALIZED (
    SELECT p.tenant_id, p.discussion_id, p.seq
      FROM search_positions p
     WHERE (p.tenant_id, p.discussion_id) IN (SELECT u.t, u.d FROM unnest(p_tenants, p_discussions) AS u(t, d))
     ORDER BY p.tenant_id, p.discussion_id
       FOR UPDATE OF p
  ), span AS MATERIALIZED (
    -- each discussion behind its head: the events this step takes (pos, to]
    SELECT l.tenant_id, l.discussion_id, l.seq AS pos, LEAST(d.seq, l.seq + p_limit) AS upto, d.seq AS head
      FROM locked l JOIN discussions d ON d.tenant_id = l.tenant_id AND d.id = l.discussion_id
     WHERE d.seq > l.seq
  ), got AS MATERIALIZED (
    SELECT s.tenant_id, s.discussion_id, s.pos, s.upto, s.head, count(e.seq)::int AS n_read,
           array_agg(DISTINCT COALESCE(e.envelope::json, e.payload) #>> '{data,comment,id}')
             FILTER (WHERE e.type IN ('comment_created', 'comment_edited', 'comment_deleted')) AS ids,
           array_agg(extract(epoch FROM clock_timestamp() - e.occurred_at)::real) FILTER (WHERE e.seq IS NOT NULL) AS lags
      FROM span s
      LEFT JOIN events e ON e.tenant_id = s.tenant_id AND e.discussion_id = s.discussion_id AND e.seq > s.pos AND e.seq <= s.upto
     GROUP BY s.tenant_id, s.discussion_id, s.pos, s.upto, s.head
  ), applied AS MATERIALIZED (
    SELECT * FROM got WHERE n_read = upto - pos
  ), named AS MATERIALIZED (
    SELECT a.tenant_id, a.discussion_id, x.id AS comment_id FROM applied a, unnest(a.ids) AS x(id) WHERE x.id IS NOT NULL
  ), dropped AS (
    DELETE FROM comment_search s
     USING named n
     WHERE s.tenant_id = n.tenant_id AND s.discussion_id = n.discussion_id AND s.comment_id = n.comment_id
       AND NOT EXISTS (SELECT 1 FROM comments c WHERE c.tenant_id = n.tenant_id AND c.id = n.comment_id
                                                  AND c.discussion_id = n.discussion_id AND eng_search_has_document(c))
  ), written AS (
    INSERT INTO comment_search AS s (tenant_id, discussion_id, comment_id, author_id, created_at, vector)
    SELECT c.tenant_id, c.discussion_id, c.id, c.author_id, c.created_at, eng_search_vector(c.body)
      FROM named n JOIN comments c ON c.tenant_id = n.tenant_id AND c.id = n.comment_id AND c.discussion_id = n.discussion_id
     WHERE eng_search_has_document(c)
    ON CONFLICT (tenant_id, discussion_id, comment_id) DO UPDATE
       SET author_id = EXCLUDED.author_id, created_at = EXCLUDED.created_at, vector = EXCLUDED.vector
     WHERE (s.author_id, s.created_at, s.vector) IS DISTINCT FROM (EXCLUDED.author_id, EXCLUDED.created_at, EXCLUDED.vector)
  ), moved AS (
    UPDATE search_positions p SET seq = a.upto
      FROM applied a
     WHERE p.tenant_id = a.tenant_id AND p.discussion_id = a.discussion_id
  )
  SELECT json_build_object(
           'events', COALESCE((SELECT sum(upto - pos) FROM applied), 0),
           'more', COALESCE((SELECT json_agg(json_build_array(tenant_id, discussion_id)) FROM applied WHERE upto < head), '[]'::json),
           'gaps', COALESCE((SELECT json_agg(json_build_array(tenant_id, discussion_id)) FROM got WHERE n_read < upto - pos), '[]'::json),
           'lags', COALESCE((SELECT json_agg(l) FROM applied, unnest(lags) AS l), '[]'::json))
    INTO v_result;
  RETURN v_result;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_create_event_log()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
-- The partitioned table (the columns of prisma/schema.prisma's Event) and its DEFAULT partition.
BEGIN
  CREATE TABLE events (
    id uuid NOT NULL,
    tenant_id text NOT NULL,
    discussion_id text NOT NULL,
    seq integer NOT NULL,
    type text NOT NULL,
    audience text NOT NULL DEFAULT 'all',
    reader_id text,
    payload json,
    occurred_at timestamp(3) with time zone NOT NULL DEFAULT CURRENT_TIMESTAMP,
    envelope text,
    CONSTRAINT events_pkey PRIMARY KEY (id, occurred_at)
  ) PARTITION BY RANGE (occurred_at);
  CREATE INDEX events_tenant_id_discussion_id_seq_idx ON events (tenant_id, discussion_id, seq);
  CREATE INDEX events_tenant_id_occurred_at_idx ON events (tenant_id, occurred_at);
  CREATE TABLE events_default PARTITION OF events DEFAULT;
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
    -- (the log keeps its envelopes as text, rows of releases before as json: each is read into jsonb
    -- once, OFFSET 0 keeping the subquery's column one value, and written back as text)
    WITH x AS MATERIALIZED (
      SELECT s.id, s.occurred_at, s.p FROM (SELECT id, occurred_at, COALESCE(envelope, payload::text)::jsonb AS p FROM events
                                             WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND seq <= d.seq OFFSET 0) s
       WHERE s.p #>> '{data,comment,id}' = ANY (v_ids))
    UPDATE events e
       SET envelope = jsonb_set(jsonb_set(jsonb_set(x.p, '{data,comment,author}',
                                                   '{"id":"","name":"[erased]","avatarUrl":null,"badge":null}'::jsonb),
                                         '{data,comment,body}',
                                         to_jsonb(CASE WHEN p_delete OR x.p #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker END)),
                               '{data,comment,bodyHtml}',
                               to_jsonb(CASE WHEN p_delete OR x.p #>> '{data,comment,status}' = 'deleted' THEN '' ELSE p_marker_html END))::text,
           payload = NULL,
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

CREATE OR REPLACE FUNCTION public.eng_erase_reader_rest(p_tenant text, p_reader text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_events int := 0;
  v_reports int := 0;
  v_profile int := 0;
BEGIN
  -- (each envelope read into jsonb once, as in eng_erase_reader_batch, and written back as text)
  WITH x AS MATERIALIZED (
    SELECT s.id, s.occurred_at, s.reader_id, s.p FROM (SELECT id, occurred_at, reader_id, COALESCE(envelope, payload::text)::jsonb AS p FROM events
                                                        WHERE tenant_id = p_tenant OFFSET 0) s
     WHERE s.reader_id = p_reader OR s.p #>> '{data,reaction,readerId}' = p_reader
        OR s.p #>> '{data,notification,readerId}' = p_reader OR s.p #>> '{data,comment,author,id}' = p_reader)
  UPDATE events e
     SET envelope = CASE
           WHEN x.p #>> '{data,reaction,readerId}' = p_reader THEN jsonb_set(x.p, '{data,reaction,readerId}', '""'::jsonb)::text
           WHEN x.p #>> '{data,notification,readerId}' = p_reader THEN jsonb_set(x.p, '{data,notification,readerId}', '""'::jsonb)::text
           WHEN x.p #>> '{data,comment,author,id}' = p_reader THEN
             jsonb_set(jsonb_set(jsonb_set(x.p, '{data,comment,author}', '{"id":"","name":"[erased]","avatarUrl":null,"badge":null}'::jsonb),
                                 '{data,comment,body}', '""'::jsonb), '{data,comment,bodyHtml}', '""'::jsonb)::text
           ELSE x.p::text END,
         payload = NULL,
         reader_id = CASE WHEN e.reader_id = p_reader THEN '' ELSE e.reader_id END
    FROM x
   WHERE e.id = x.id AND e.occurred_at = x.occurred_at;
  GET DIAGNOSTICS v_events = ROW_COUNT;
  DELETE FROM comment_reports WHERE tenant_id = p_tenant AND reader_id = p_reader;
  GET DIAGNOSTICS v_reports = ROW_COUNT;
  DELETE FROM stream_tickets WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- the reader's mail, queued or sent, goes with them (its bodies quote their comments), and the
  -- outbound queue's jobs that would compose it (kind `email_compose`, which name the reader) or send
  -- it (kind `email`, each with its message's id)
  DELETE FROM email_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM webhook_deliveries
   WHERE tenant_id = p_tenant AND kind = 'email_compose' AND message ->> 'readerId' = p_reader;
  DELETE FROM webhook_deliveries d USING email_messages m
   WHERE m.tenant_id = p_tenant AND m.reader_id = p_reader AND d.id = m.id AND d.tenant_id = p_tenant AND d.kind = 'email';
  DELETE FROM email_messages WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and their inbox (items of their own comments in others' inboxes are not listed: author_id is '')
  DELETE FROM inbox_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM inbox_counters WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and the discussions they follow or silenced
  DELETE FROM discussion_subscriptions WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and their hosted sign-in's sessions: the erased reader is signed out everywhere
  DELETE FROM reader_sessions WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- and their passkeys: nothing of the erased reader signs in again
  DELETE FROM reader_passkeys WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM idempotency_keys k
   WHERE k.tenant_id = p_tenant AND k.status IS NOT NULL
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(k.results) x
                  WHERE x #>> '{row,authorId}' = p_reader OR x #>> '{row,readerId}' = p_reader);
  DELETE FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  GET DIAGNOSTICS v_profile = ROW_COUNT;
  RETURN json_build_object('eventsScrubbed', v_events, 'reports', v_reports, 'profile', v_profile > 0);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_envelope_members(p_tenant text, p_discussion text, p_type text, p_at timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  -- the members of an event's envelope (contract section 5) a write knows before its id and seq, as
  -- JSON text without braces; a post's request hands them over built the same way
  -- (src/events/stored-envelope.ts, envelopeMembers)
  SELECT '"type":' || to_json(p_type) || ',"tenantId":' || to_json(p_tenant) || ',"discussionId":' || to_json(p_discussion)
         || ',"occurredAt":"' || eng_iso(p_at) || '"'
$function$;
