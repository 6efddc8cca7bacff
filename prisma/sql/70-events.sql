-- What ends every write: the event appended with the discussion's next seq and what it sends outside
-- the database, in the write's own transaction: its jobs of the outbound queue (webhook_deliveries,
-- src/outbound/: webhooks, and the activities of a federated discussion) and a reply's email; and the
-- chat alerts a held or reported comment sends.

CREATE OR REPLACE FUNCTION public.eng_append_event(p_tenant text, p_discussion text, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_reader
DECLARE
  v_seq int;
  v_federated boolean;
BEGIN
  UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = p_discussion RETURNING seq, federated INTO v_seq, v_federated;
  RETURN eng_insert_event(p_tenant, p_discussion, v_seq, p_type, p_audience, p_reader, p_data, p_at, coalesce(v_federated, false), NULL);
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

CREATE OR REPLACE FUNCTION public.eng_queue_email(p_tenant text, p_source text, p_event uuid, p_comment text, p_discussion text, p_readers text[], p_modes text[], p_dues timestamp with time zone[], p_at timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- nullable: p_event
-- A comment told by email (contract sections 15 and 19): an email_items row for each reader (p_source
-- `reply`: a reply to their comment; `new_comment`: a new comment of a discussion they follow), with
-- its mode and when it is due, and the reader's job of the outbound queue that makes their due items
-- into one message (kind `email_compose`, src/modules/email/engine/mail-queue.ts), due with the item.
-- The one place email is queued for a write, in the write's transaction. A reader has at most one
-- pending compose job per source and mode (its message's `composeKey`, under a unique index): an
-- item for a reader whose job is pending locks that job (ON CONFLICT DO UPDATE … WHERE false updates
-- nothing but locks the row) instead of queuing another, so a compose, which takes the key off its
-- job before it takes the items, waits for this transaction and then takes this item too; an item
-- committed after the compose has taken the key queues a job of its own. Answers the items queued.
DECLARE
  v_items int;
BEGIN
  INSERT INTO email_items (id, tenant_id, reader_id, event_id, source, comment_id, discussion_id, mode, due_at, created_at)
  SELECT gen_random_uuid(), p_tenant, x.reader_id, p_event, p_source, p_comment, p_discussion, x.mode, x.due_at, p_at
    FROM unnest(p_readers, p_modes, p_dues) AS x(reader_id, mode, due_at);
  GET DIAGNOSTICS v_items = ROW_COUNT;
  INSERT INTO webhook_deliveries AS j (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), p_tenant, 'email_compose',
         jsonb_build_object('composeKey', jsonb_build_array(p_tenant, x.reader_id, p_source, x.mode)::text,
                            'readerId', x.reader_id, 'source', p_source, 'mode', x.mode),
         x.due_at, p_at, p_at
    FROM unnest(p_readers, p_modes, p_dues) AS x(reader_id, mode, due_at)
  ON CONFLICT ((message ->> 'composeKey')) WHERE message ? 'composeKey' DO UPDATE SET updated_at = j.updated_at WHERE false;
  RETURN v_items;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_federate_discussion(p_tenant text, p_discussion text, p_again boolean, p_at timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- A discussion federated (contract section 24): a new one with a url while its tenant federates (its
-- actor made before it: an actor no one has looked up has no followers), or any with a url again
-- (p_again: POST /discussions/{id}/federate). It is
-- marked federated (its comments' events then enqueue their activities: eng_insert_event) and its
-- announcement, Create(Article) to the followers, is one `activitypub_fanout` job; answers the jobs
-- enqueued (0: not federated).
DECLARE
  d discussions;
BEGIN
  SELECT x.* INTO d FROM discussions x
    JOIN tenants t ON t.id = x.tenant_id AND t.settings #>> '{federation,enabled}' = 'true'
    LEFT JOIN federation_actors a ON a.tenant_id = x.tenant_id
   WHERE x.tenant_id = p_tenant AND x.id = p_discussion AND x.url IS NOT NULL
     AND (p_again OR x.created_at >= a.created_at);
  IF d.id IS NULL THEN RETURN 0; END IF;
  INSERT INTO federation_discussions AS f (tenant_id, discussion_id, announced_at, created_at)
  VALUES (p_tenant, p_discussion, NULL, p_at)
  ON CONFLICT (tenant_id, discussion_id) DO UPDATE SET announced_at = NULL WHERE p_again;
  IF NOT FOUND THEN RETURN 0; END IF;
  UPDATE discussions SET federated = true WHERE tenant_id = p_tenant AND id = p_discussion AND NOT federated;
  INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
  VALUES (gen_random_uuid(), p_tenant, 'activitypub_fanout',
          jsonb_build_object('discussionId', p_discussion, 'seq', d.seq, 'announce', true), p_at, p_at, p_at);
  RETURN 1;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_next_digest(p_at timestamp with time zone, p_hour integer)
 RETURNS timestamp with time zone
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- the first p_hour:00 UTC after p_at: when a daily digest that p_at's reply joins goes out
  SELECT CASE WHEN t > p_at THEN t ELSE t + interval '1 day' END
    FROM (SELECT (date_trunc('day', p_at AT TIME ZONE 'UTC') + make_interval(hours => p_hour)) AT TIME ZONE 'UTC' AS t) x
$function$;

CREATE OR REPLACE FUNCTION public.eng_enqueue_alerts(p_tenant text, p_trigger text, p_comment text, p_reason jsonb, p_at timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- Chat alerts (contract section 21, src/modules/alerts/): one delivery row of kind `alert` for each of
-- the tenant's settings `alerts` whose `on` lists p_trigger (pending | hook_hold | reported), in the
-- transaction of the change itself. The webhook worker claims, sends and retries them as it does
-- webhook jobs; the message (its text, its Approve and Reject links) is made when it is sent. Each
-- row keeps the comment's revision as it is now, after the change: the links act only on that one
-- (eng_decide_by_alert_link).
DECLARE
  v_jobs int;
  v_revision int := (SELECT revision FROM comments WHERE tenant_id = p_tenant AND id = p_comment);
BEGIN
  INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), t.id, 'alert',
         jsonb_build_object('alertId', a ->> 'id', 'trigger', p_trigger, 'commentId', p_comment, 'reason', p_reason,
                            'revision', v_revision),
         p_at, p_at, p_at
    FROM tenants t
   CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(t.settings -> 'alerts') = 'array' THEN t.settings -> 'alerts'
                                                ELSE '[]'::jsonb END) a
   WHERE t.id = p_tenant AND a -> 'on' @> to_jsonb(p_trigger);
  GET DIAGNOSTICS v_jobs = ROW_COUNT;
  RETURN v_jobs;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_enqueue_akismet(c comments, p_to text, p_at timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- Akismet learns from the moderators (contract section 21, src/modules/moderation/engine/akismet-feedback.ts):
-- c is the comment before a moderator's change to p_to. Approving one Akismet held sends submit-ham,
-- rejecting a published one submit-spam, while the tenant has Akismet: one delivery row of kind
-- `akismet`, in the transaction of the change; the webhook worker sends and retries it.
DECLARE
  v_call text := CASE WHEN p_to = 'approved' AND c.status <> 'approved' AND c.moderation_reason ->> 'source' = 'akismet' THEN 'submit-ham'
                      WHEN p_to = 'rejected' AND c.status = 'approved' THEN 'submit-spam' END;
  v_jobs int;
BEGIN
  IF v_call IS NULL THEN RETURN 0; END IF;
  INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), t.id, 'akismet', jsonb_build_object('call', v_call, 'commentId', c.id), p_at, p_at, p_at
    FROM tenants t
   WHERE t.id = c.tenant_id AND jsonb_typeof(t.settings #> '{safety,akismet}') = 'object';
  GET DIAGNOSTICS v_jobs = ROW_COUNT;
  RETURN v_jobs;
END $function$;
