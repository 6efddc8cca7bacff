-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text): dropped
-- eng_post_bluesky_reply(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_uri text, p_uri_hash text): dropped
-- eng_reader_sanctioned_until(): new
-- eng_post_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone): changed
-- eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text): new
-- eng_ban_reader(p_tenant text, p_reader text, p_id text, p_until timestamp with time zone, p_reason text, p_shadow boolean, p_by text, p_reject_pending boolean, p_at timestamp with time zone): changed
-- eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone, p_federated boolean, p_hooked boolean): changed

DROP FUNCTION public.eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text);

DROP FUNCTION public.eng_post_bluesky_reply(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_uri text, p_uri_hash text);

CREATE OR REPLACE FUNCTION public.eng_reader_sanctioned_until()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
-- After a reader's row is inserted, whoever inserts it (a post, a sign-in, an import, an email
-- preference…): until when a sanction of theirs may be in force (readers.sanctioned_until, which a
-- post reads with the reader's row, looking for the sanction only then). A sanction outlives its
-- reader's erasure, which deletes the row: a row made again after one carries it. After the insert
-- (an upsert that finds the row runs nothing), and a write only when there is a sanction.
BEGIN
  UPDATE readers r SET sanctioned_until = s.until
    FROM (SELECT max(COALESCE(x.until, 'infinity')) AS until FROM reader_sanctions x
           WHERE x.tenant_id = NEW.tenant_id AND x.reader_id = NEW.id AND x.lifted_at IS NULL) s
   WHERE s.until IS NOT NULL AND r.tenant_id = NEW.tenant_id AND r.id = NEW.id;
  RETURN NULL;
END $function$;

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
  v_visible int;
  v_parent_ok boolean := true;
  v_seq int;
  v_state "DiscussionState";
  v_federated boolean;
  v_followed boolean;
  v_new boolean;
  p comments;
  c comments;
  v_comment json;
  v_row json;
  v_events json[];
BEGIN
  -- 1. outside the discussion's lock, in one statement (each statement is set up by the executor on
  -- every call, and each test or assignment of this function costs a post about 2,000 instructions:
  -- npm run bench:pg-cost, so what can be read here is): from the reader's row, their trust, until
  -- when a sanction may be in force, whether their row is as the identity says (else eng_write_reader
  -- writes it below), the badge a moderator set (which wins over the claim) and whether the
  -- claim changes it (eng_claim_badge writes it below, with the reader's row); and whether the tenant
  -- has a webhook endpoint (eng_insert_event's probe, handed to it). The reader's row alone, not
  -- joined to a row that is always there (that join's set-up cost a post 12,000 instructions more than
  -- this and the branch of a first post): a reader's first post finds none (no sanction, no moderator's
  -- badge, the probe left to eng_insert_event).
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
  c_shown := CASE WHEN eng_is_shadowed(c) THEN eng_shadow_shown(c) ELSE c END;
  v_comment := eng_comment_json_by(c_shown, json_build_object('id', p_reader, 'name', p_name, 'avatarUrl', p_avatar,
                                                        'badge', COALESCE(r.moderator_badge, p_badge)));
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
                                 c.id, v_reason, p_at);
    END IF;
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

CREATE OR REPLACE FUNCTION public.eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at, p_remote_actor, p_remote_hash
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
  v_result json;
BEGIN
  v_result := eng_post_comment(p_tenant, p_discussion, p_id, p_reader, p_name, p_avatar, p_badge, p_body, p_body_html, p_parent,
                               p_status, p_reason, p_trusted_status, p_trusted_reason, p_hold, p_at,
                               CASE WHEN p_network = 'bluesky' THEN 'bluesky' ELSE p_kind END, p_created_at);
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

CREATE OR REPLACE FUNCTION public.eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone, p_federated boolean, p_hooked boolean)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_reader, p_hooked
-- p_hooked: whether the tenant has an endpoint that may take a webhook (a verified one, not
-- disabled), when the caller has asked already (eng_post_comment's first statement); NULL: asked here
DECLARE
  v_id uuid := gen_random_uuid();
  v_env json := json_build_object('id', v_id, 'seq', p_seq, 'type', p_type, 'tenantId', p_tenant,
                                  'discussionId', p_discussion, 'occurredAt', eng_iso(p_at), 'data', p_data);
  v_jobs int;
  v_fanout int;
BEGIN
  INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
  VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env, p_at);
  -- The outbound queue's jobs, the one place a write's effects outside the database are enqueued.
  -- Each insert runs only when it has rows to write: an INSERT's set-up (the jobs table and its
  -- indexes opened) costs a write about 4 % of its PostgreSQL work even when it inserts nothing, a
  -- probe a third of that (npm run bench:pg-cost). Whether the discussion is federated comes from
  -- its row, which the caller holds (p_federated): no probe. The same transaction's snapshot rules
  -- as one statement: an endpoint verified while the write runs may or may not get the event.
  IF p_audience <> 'reader' AND p_type <> 'notification_reply' THEN
    -- its webhook jobs, one for each endpoint that takes it (the probe, a statement of its own, run
    -- only for an event a webhook may take and when the caller has not asked it)
    IF p_hooked IS NULL THEN
      p_hooked := EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled');
    END IF;
    IF p_hooked THEN
      INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
      SELECT gen_random_uuid(), w.tenant_id, w.id, v_id, p_at, p_at, p_at
        FROM webhook_endpoints w
       WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'
         AND (w.events @> ARRAY[p_type]::text[] OR w.events @> ARRAY['*']::text[]);
      GET DIAGNOSTICS v_jobs = ROW_COUNT;
    END IF;
    -- a federated discussion's comment event: one job that makes it into its activity and that
    -- activity's deliveries (src/modules/federation/engine/outbound.ts), with what it needs of the event
    IF p_federated AND p_type IN ('comment_created', 'comment_approved', 'comment_edited', 'comment_deleted', 'comment_rejected') THEN
      INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
      VALUES (gen_random_uuid(), p_tenant, 'activitypub_fanout',
              jsonb_build_object('discussionId', p_discussion, 'seq', p_seq, 'event', jsonb_build_object(
                'type', p_type, 'commentId', p_data #>> '{comment,id}', 'status', p_data #>> '{comment,status}',
                'authorId', p_data #>> '{comment,author,id}')),
              p_at, p_at, p_at);
      v_fanout := 1;
    END IF;
  ELSIF p_type = 'notification_reply' THEN
    -- a reply email for the parent's author (contract section 15), in the reply's own transaction: when
    -- the reader has an address that is not suppressed and wants reply emails (their choice, else the
    -- tenant's email.defaultReplies, 'off' by default). `immediate` waits 2 minutes so that replies in
    -- that window go out as one message; `daily` waits for the tenant's email.digestHour (UTC, 7 by default).
    PERFORM eng_queue_email(p_tenant, 'reply', v_id, p_data #>> '{notification,commentId}', p_discussion, ARRAY[p_reader], ARRAY[x.mode],
                            ARRAY[CASE x.mode WHEN 'immediate' THEN p_at + interval '2 minutes' ELSE eng_next_digest(p_at, x.hour) END], p_at)
      FROM (SELECT coalesce(r.reply_emails::text, t.settings #>> '{email,defaultReplies}', 'off') AS mode,
                   coalesce((t.settings #>> '{email,digestHour}')::int, 7) AS hour
              FROM readers r JOIN tenants t ON t.id = r.tenant_id
             WHERE r.tenant_id = p_tenant AND r.id = p_reader AND r.email IS NOT NULL AND r.email_suppressed_at IS NULL) x
     WHERE x.mode IN ('immediate', 'daily');
  END IF;
  -- (each test or assignment costs a write about 2,000 instructions: npm run bench:pg-cost; the counts are
  -- NULL until set, not set to 0 first)
  RETURN json_build_object('envelope', v_env, 'audience', p_audience, 'readerId', p_reader, 'jobs', COALESCE(v_jobs, 0) + COALESCE(v_fanout, 0));
END $function$;
