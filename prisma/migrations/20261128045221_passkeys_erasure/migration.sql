-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_erase_reader_rest(p_tenant text, p_reader text): changed

CREATE OR REPLACE FUNCTION public.eng_erase_reader_rest(p_tenant text, p_reader text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_events int := 0;
  v_reports int := 0;
  v_profile int := 0;
BEGIN
  -- (each envelope read into jsonb once, as in eng_erase_reader_batch, and written back as json)
  WITH x AS MATERIALIZED (
    SELECT s.id, s.occurred_at, s.reader_id, s.p FROM (SELECT id, occurred_at, reader_id, payload::jsonb AS p FROM events
                                                        WHERE tenant_id = p_tenant OFFSET 0) s
     WHERE s.reader_id = p_reader OR s.p #>> '{data,reaction,readerId}' = p_reader
        OR s.p #>> '{data,notification,readerId}' = p_reader OR s.p #>> '{data,comment,author,id}' = p_reader)
  UPDATE events e
     SET payload = CASE
           WHEN x.p #>> '{data,reaction,readerId}' = p_reader THEN jsonb_set(x.p, '{data,reaction,readerId}', '""'::jsonb)::json
           WHEN x.p #>> '{data,notification,readerId}' = p_reader THEN jsonb_set(x.p, '{data,notification,readerId}', '""'::jsonb)::json
           WHEN x.p #>> '{data,comment,author,id}' = p_reader THEN
             jsonb_set(jsonb_set(jsonb_set(x.p, '{data,comment,author}', '{"id":"","name":"[erased]","avatarUrl":null,"badge":null}'::jsonb),
                                 '{data,comment,body}', '""'::jsonb), '{data,comment,bodyHtml}', '""'::jsonb)::json
           ELSE e.payload END,
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
