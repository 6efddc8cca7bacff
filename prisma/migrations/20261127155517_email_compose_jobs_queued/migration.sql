-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_follow_fanout(p_tenant text, p_job uuid, p_token uuid, p_limit integer, p_lease_until timestamp with time zone, p_at timestamp with time zone): changed
-- eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone, p_federated boolean): changed
-- eng_queue_email(p_tenant text, p_source text, p_event uuid, p_comment text, p_discussion text, p_readers text[], p_modes text[], p_dues timestamp with time zone[], p_at timestamp with time zone): new

CREATE OR REPLACE FUNCTION public.eng_follow_fanout(p_tenant text, p_job uuid, p_token uuid, p_limit integer, p_lease_until timestamp with time zone, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- One batch of a follow job, in one transaction: the next p_limit followers (by reader id) after the
-- job's `after` get a new_comment item each, numbered by their own inbox sequence (as
-- eng_reply_notification does), and, if they want it, an email item; then the job records the last
-- reader done in its message (its end, when no follower is left, is the outbound worker's to write).
-- Only the claim holding p_token may: a lease lost to another worker answers null. Re-run safe: a
-- follower who has an item of this comment (a reply item too: the reply wins) gets none, so a batch
-- redone after a crash adds nothing twice.
DECLARE
  j webhook_deliveries;
  v_discussion text;
  v_comment text;
  v_author text;
  v_after text;
  v_last text;
  v_seen int;
  v_readers text[];
BEGIN
  SELECT * INTO j FROM webhook_deliveries
   WHERE tenant_id = p_tenant AND id = p_job AND claim_token = p_token AND kind = 'follow' AND status = 'pending' FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  v_discussion := j.message ->> 'discussionId';
  v_comment := j.message ->> 'commentId';
  v_author := j.message ->> 'authorId';
  v_after := coalesce(j.message ->> 'after', '');
  SELECT max(f.reader_id), count(*)::int INTO v_last, v_seen
    FROM (SELECT reader_id FROM discussion_subscriptions
           WHERE tenant_id = p_tenant AND discussion_id = v_discussion AND mode = 'all' AND reader_id > v_after
           ORDER BY reader_id LIMIT p_limit) f;
  WITH f AS (
    SELECT s.reader_id FROM discussion_subscriptions s
     WHERE s.tenant_id = p_tenant AND s.discussion_id = v_discussion AND s.mode = 'all' AND s.reader_id > v_after
       AND s.reader_id <= v_last AND s.reader_id <> v_author
       AND NOT EXISTS (SELECT 1 FROM inbox_items i WHERE i.tenant_id = p_tenant AND i.reader_id = s.reader_id
                          AND i.type IN ('reply', 'new_comment') AND i.comment_id = v_comment)
     ORDER BY s.reader_id
  ), n AS (
    INSERT INTO inbox_counters AS x (tenant_id, reader_id, seq)
    SELECT p_tenant, f.reader_id, 1 FROM f ORDER BY f.reader_id
    ON CONFLICT (tenant_id, reader_id) DO UPDATE SET seq = x.seq + 1
    RETURNING x.reader_id, x.seq
  ), items AS (
    INSERT INTO inbox_items (id, tenant_id, reader_id, seq, type, comment_id, discussion_id, parent_id, created_at)
    SELECT gen_random_uuid(), p_tenant, n.reader_id, n.seq, 'new_comment', v_comment, v_discussion, NULL, p_at FROM n
    ON CONFLICT (tenant_id, reader_id, type, comment_id) DO NOTHING
    RETURNING reader_id
  )
  SELECT coalesce(array_agg(reader_id), ARRAY[]::text[]) INTO v_readers FROM items;
  -- the email of a new comment (PATCH /me/notifications {"subscriptions"}), queued as a reply's is
  -- (eng_queue_email): `immediate` 2 minutes later, `daily` at the tenant's email.digestHour; in the
  -- readers' order, as every batch locks their compose jobs, so two batches never wait on each other
  PERFORM eng_queue_email(p_tenant, 'new_comment', NULL, v_comment, v_discussion, array_agg(r.id ORDER BY r.id),
                          array_agg(r.subscription_emails::text ORDER BY r.id),
                          array_agg(CASE r.subscription_emails WHEN 'immediate' THEN p_at + interval '2 minutes'
                                    ELSE eng_next_digest(p_at, coalesce((t.settings #>> '{email,digestHour}')::int, 7)) END ORDER BY r.id), p_at)
     FROM readers r JOIN tenants t ON t.id = r.tenant_id
    WHERE r.tenant_id = p_tenant AND r.id = ANY(v_readers)
      AND r.subscription_emails IN ('immediate', 'daily') AND r.email IS NOT NULL AND r.email_suppressed_at IS NULL
   HAVING count(*) > 0;
  IF v_seen >= p_limit THEN
    UPDATE webhook_deliveries SET message = jsonb_set(message, '{after}', to_jsonb(v_last)), locked_until = p_lease_until
     WHERE tenant_id = p_tenant AND id = p_job;
  END IF;
  RETURN json_build_object('readers', array_to_json(v_readers), 'done', v_seen < p_limit);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone, p_federated boolean)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_id uuid := gen_random_uuid();
  v_env json := json_build_object('id', v_id, 'seq', p_seq, 'type', p_type, 'tenantId', p_tenant,
                                  'discussionId', p_discussion, 'occurredAt', eng_iso(p_at), 'data', p_data);
  v_jobs int := 0;
  v_fanout int := 0;
BEGIN
  INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
  VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env::jsonb, p_at);
  -- The outbound queue's jobs, the one place a write's effects outside the database are enqueued.
  -- Each insert runs only when it has rows to write: an INSERT's set-up (the jobs table and its
  -- indexes opened) costs a write about 4 % of its PostgreSQL work even when it inserts nothing, a
  -- probe a third of that (npm run bench:pg-cost). Whether the discussion is federated comes from
  -- its row, which the caller holds (p_federated): no probe. The same transaction's snapshot rules
  -- as one statement: an endpoint verified while the write runs may or may not get the event.
  IF p_audience <> 'reader' AND p_type <> 'notification_reply' THEN
    -- its webhook jobs, one for each endpoint that takes it (the probe, a statement of its own, run
    -- only for an event a webhook may take)
    IF EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled') THEN
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
  END IF;
  -- a reply email for the parent's author (contract section 15), in the reply's own transaction: when
  -- the reader has an address that is not suppressed and wants reply emails (their choice, else the
  -- tenant's email.defaultReplies, 'off' by default). `immediate` waits 2 minutes so that replies in
  -- that window go out as one message; `daily` waits for the tenant's email.digestHour (UTC, 7 by default).
  IF p_type = 'notification_reply' THEN
    PERFORM eng_queue_email(p_tenant, 'reply', v_id, p_data #>> '{notification,commentId}', p_discussion, ARRAY[p_reader], ARRAY[x.mode],
                            ARRAY[CASE x.mode WHEN 'immediate' THEN p_at + interval '2 minutes' ELSE eng_next_digest(p_at, x.hour) END], p_at)
      FROM (SELECT coalesce(r.reply_emails::text, t.settings #>> '{email,defaultReplies}', 'off') AS mode,
                   coalesce((t.settings #>> '{email,digestHour}')::int, 7) AS hour
              FROM readers r JOIN tenants t ON t.id = r.tenant_id
             WHERE r.tenant_id = p_tenant AND r.id = p_reader AND r.email IS NOT NULL AND r.email_suppressed_at IS NULL) x
     WHERE x.mode IN ('immediate', 'daily');
  END IF;
  RETURN json_build_object('envelope', v_env, 'audience', p_audience, 'readerId', p_reader, 'jobs', v_jobs + v_fanout);
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

-- Items queued before compose jobs existed: each reader's job, per source and mode, due with their first item.
INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
SELECT gen_random_uuid(), i.tenant_id, 'email_compose',
       jsonb_build_object('composeKey', jsonb_build_array(i.tenant_id, i.reader_id, i.source, i.mode)::text,
                          'readerId', i.reader_id, 'source', i.source, 'mode', i.mode),
       min(i.due_at), min(i.created_at), min(i.created_at)
  FROM email_items i
 GROUP BY i.tenant_id, i.reader_id, i.source, i.mode
ON CONFLICT ((message ->> 'composeKey')) WHERE message ? 'composeKey' DO NOTHING;
