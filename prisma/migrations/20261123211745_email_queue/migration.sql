-- AlterTable
ALTER TABLE "readers" ADD COLUMN     "email" TEXT,
ADD COLUMN     "email_suppressed_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "email_items" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "event_id" UUID NOT NULL,
    "comment_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "email_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "email_messages" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "reader_id" TEXT,
    "operator_id" TEXT,
    "kind" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "text_body" TEXT NOT NULL,
    "html_body" TEXT NOT NULL,
    "unsubscribe_url" TEXT,
    "item_count" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),
    "locked_by" TEXT,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "sent_at" TIMESTAMPTZ(3),

    CONSTRAINT "email_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "email_items_due_at_idx" ON "email_items"("due_at");

-- CreateIndex
CREATE INDEX "email_items_tenant_id_reader_id_idx" ON "email_items"("tenant_id", "reader_id");

-- CreateIndex
CREATE INDEX "email_messages_state_next_attempt_at_idx" ON "email_messages"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "email_messages_tenant_id_reader_id_created_at_idx" ON "email_messages"("tenant_id", "reader_id", "created_at");

-- AddForeignKey
ALTER TABLE "email_items" ADD CONSTRAINT "email_items_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "email_messages" ADD CONSTRAINT "email_messages_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Reply emails queued with the reply (prisma/functions.sql holds the live definitions)
CREATE OR REPLACE FUNCTION public.eng_next_digest(p_at timestamp with time zone, p_hour integer)
 RETURNS timestamp with time zone
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- the first p_hour:00 UTC after p_at: when a daily digest that p_at's reply joins goes out
  SELECT CASE WHEN t > p_at THEN t ELSE t + interval '1 day' END
    FROM (SELECT (date_trunc('day', p_at AT TIME ZONE 'UTC') + make_interval(hours => p_hour)) AT TIME ZONE 'UTC' AS t) x
$function$;

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
  WITH e AS (
    INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
    VALUES (v_id, p_tenant, p_discussion, p_seq, p_type, p_audience, p_reader, v_env::jsonb, p_at)
  )
  INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), w.tenant_id, w.id, v_id, p_at, p_at, p_at
    FROM webhook_endpoints w
   WHERE p_audience <> 'reader' AND p_type <> 'notification_reply'
     AND w.tenant_id = p_tenant AND w.verified AND w.state <> 'disabled'
     AND (w.events @> ARRAY[p_type]::text[] OR w.events @> ARRAY['*']::text[]);
  GET DIAGNOSTICS v_jobs = ROW_COUNT;
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

CREATE OR REPLACE FUNCTION public.eng_erase_reader_rest(p_tenant text, p_reader text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_events int := 0;
  v_reports int := 0;
  v_profile int := 0;
BEGIN
  UPDATE events e
     SET payload = CASE
           WHEN e.payload #>> '{data,reaction,readerId}' = p_reader THEN jsonb_set(e.payload, '{data,reaction,readerId}', '""'::jsonb)
           WHEN e.payload #>> '{data,notification,readerId}' = p_reader THEN jsonb_set(e.payload, '{data,notification,readerId}', '""'::jsonb)
           WHEN e.payload #>> '{data,comment,author,id}' = p_reader THEN
             jsonb_set(jsonb_set(e.payload, '{data,comment,author}', '{"id":"","name":"[erased]","avatarUrl":null}'::jsonb),
                       '{data,comment,body}', '""'::jsonb)
           ELSE e.payload END,
         reader_id = CASE WHEN e.reader_id = p_reader THEN '' ELSE e.reader_id END
   WHERE e.tenant_id = p_tenant
     AND (e.reader_id = p_reader OR e.payload #>> '{data,reaction,readerId}' = p_reader
          OR e.payload #>> '{data,notification,readerId}' = p_reader OR e.payload #>> '{data,comment,author,id}' = p_reader);
  GET DIAGNOSTICS v_events = ROW_COUNT;
  DELETE FROM comment_reports WHERE tenant_id = p_tenant AND reader_id = p_reader;
  GET DIAGNOSTICS v_reports = ROW_COUNT;
  DELETE FROM stream_tickets WHERE tenant_id = p_tenant AND reader_id = p_reader;
  -- the reader's mail, queued or sent, goes with them (its bodies quote their comments)
  DELETE FROM email_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM email_messages WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM idempotency_keys k
   WHERE k.tenant_id = p_tenant AND k.status IS NOT NULL
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(k.results) x
                  WHERE x #>> '{row,authorId}' = p_reader OR x #>> '{row,readerId}' = p_reader);
  DELETE FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  GET DIAGNOSTICS v_profile = ROW_COUNT;
  RETURN json_build_object('eventsScrubbed', v_events, 'reports', v_reports, 'profile', v_profile > 0);
END $function$;
