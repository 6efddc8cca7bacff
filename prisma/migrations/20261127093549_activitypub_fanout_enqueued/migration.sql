-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone): changed
-- eng_federate_discussion(p_tenant text, p_discussion text, p_again boolean, p_at timestamp with time zone): new

CREATE OR REPLACE FUNCTION public.eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_id uuid := gen_random_uuid();
  v_env json := json_build_object('id', v_id, 'seq', p_seq, 'type', p_type, 'tenantId', p_tenant,
                                  'discussionId', p_discussion, 'occurredAt', eng_iso(p_at), 'data', p_data);
  v_jobs int := 0;
  v_fanout int := 0;
  v_hooks boolean;
  v_federated boolean;
BEGIN
  INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
  VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env::jsonb, p_at);
  -- The outbound queue's jobs, the one place a write's effects outside the database are enqueued.
  -- Each insert runs only when a probe says it has rows to write: an INSERT's set-up (the jobs table
  -- and its indexes opened) costs a write about 4 % of its PostgreSQL work even when it inserts
  -- nothing, a probe a third of that (npm run bench:pg-cost), and both probes are one statement.
  -- The same transaction's snapshot rules as one statement: an endpoint verified (a discussion
  -- federated) while the write runs may or may not get the event.
  IF p_audience <> 'reader' AND p_type <> 'notification_reply' THEN
    SELECT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'),
           p_type IN ('comment_created', 'comment_approved', 'comment_edited', 'comment_deleted', 'comment_rejected')
             AND EXISTS (SELECT 1 FROM federation_discussions f WHERE f.tenant_id = p_tenant AND f.discussion_id = p_discussion)
      INTO v_hooks, v_federated;
    -- its webhook jobs, one for each endpoint that takes it
    IF v_hooks THEN
      INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
      SELECT gen_random_uuid(), w.tenant_id, w.id, v_id, p_at, p_at, p_at
        FROM webhook_endpoints w
       WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'
         AND (w.events @> ARRAY[p_type]::text[] OR w.events @> ARRAY['*']::text[]);
      GET DIAGNOSTICS v_jobs = ROW_COUNT;
    END IF;
    -- a federated discussion's comment event: one job that makes it into its activity and that
    -- activity's deliveries (src/modules/federation/engine/outbound.ts), with what it needs of the event
    IF v_federated THEN
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
    INSERT INTO email_items (id, tenant_id, reader_id, event_id, comment_id, discussion_id, mode, due_at, created_at)
    SELECT gen_random_uuid(), p_tenant, p_reader, v_id, p_data #>> '{notification,commentId}', p_discussion, x.mode,
           CASE x.mode WHEN 'immediate' THEN p_at + interval '2 minutes' ELSE eng_next_digest(p_at, x.hour) END, p_at
      FROM (SELECT coalesce(r.reply_emails::text, t.settings #>> '{email,defaultReplies}', 'off') AS mode,
                   coalesce((t.settings #>> '{email,digestHour}')::int, 7) AS hour
              FROM readers r JOIN tenants t ON t.id = r.tenant_id
             WHERE r.tenant_id = p_tenant AND r.id = p_reader AND r.email IS NOT NULL AND r.email_suppressed_at IS NULL) x
     WHERE x.mode IN ('immediate', 'daily');
  END IF;
  RETURN json_build_object('envelope', v_env, 'audience', p_audience, 'readerId', p_reader, 'jobs', v_jobs + v_fanout);
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
  INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
  VALUES (gen_random_uuid(), p_tenant, 'activitypub_fanout',
          jsonb_build_object('discussionId', p_discussion, 'seq', d.seq, 'announce', true), p_at, p_at, p_at);
  RETURN 1;
END $function$;
