-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone): changed

CREATE OR REPLACE FUNCTION public.eng_insert_event(p_tenant text, p_discussion text, p_seq integer, p_type text, p_audience text, p_reader text, p_data json, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_id uuid := gen_random_uuid();
  v_env json := json_build_object('id', v_id, 'seq', p_seq, 'type', p_type, 'tenantId', p_tenant,
                                  'discussionId', p_discussion, 'occurredAt', eng_iso(p_at), 'data', p_data);
  v_jobs int := 0;
BEGIN
  INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
  VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env::jsonb, p_at);
  -- its webhook jobs, one for each endpoint that takes it; the insert only when the tenant has a live
  -- endpoint at all: an INSERT's set-up (the jobs table and its indexes opened) costs a write about
  -- 4 % of its PostgreSQL work even when it inserts nothing, the probe a third of that (issue 51,
  -- npm run bench:pg-cost). The same transaction's snapshot rules as one statement: an endpoint
  -- verified while the write runs may or may not get the event, as before.
  IF p_audience <> 'reader' AND p_type <> 'notification_reply'
     AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled') THEN
    INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
    SELECT gen_random_uuid(), w.tenant_id, w.id, v_id, p_at, p_at, p_at
      FROM webhook_endpoints w
     WHERE w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'
       AND (w.events @> ARRAY[p_type]::text[] OR w.events @> ARRAY['*']::text[]);
    GET DIAGNOSTICS v_jobs = ROW_COUNT;
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
  RETURN json_build_object('envelope', v_env, 'audience', p_audience, 'readerId', p_reader, 'jobs', v_jobs);
END $function$;
