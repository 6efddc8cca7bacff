-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_reply_notification(c comments, p_parent_author text, p_at timestamp with time zone): changed
-- eng_erase_reader_rest(p_tenant text, p_reader text): changed

CREATE OR REPLACE FUNCTION public.eng_reply_notification(c comments, p_parent_author text, p_at timestamp with time zone)
 RETURNS json[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_seq int;
BEGIN
  -- a visible reply tells the parent's author, when that is someone else, on their own stream (and by
  -- email: eng_insert_event; and in their inbox); a post announces it, and so does a held reply's first approval (eng_announce)
  IF c.parent_id IS NULL OR p_parent_author IS NULL OR p_parent_author = c.author_id THEN RETURN ARRAY[]::json[]; END IF;
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
             jsonb_set(jsonb_set(jsonb_set(e.payload, '{data,comment,author}', '{"id":"","name":"[erased]","avatarUrl":null}'::jsonb),
                                 '{data,comment,body}', '""'::jsonb), '{data,comment,bodyHtml}', '""'::jsonb)
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
  -- and their inbox (items of their own comments in others' inboxes are not listed: author_id is '')
  DELETE FROM inbox_items WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM inbox_counters WHERE tenant_id = p_tenant AND reader_id = p_reader;
  DELETE FROM idempotency_keys k
   WHERE k.tenant_id = p_tenant AND k.status IS NOT NULL
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(k.results) x
                  WHERE x #>> '{row,authorId}' = p_reader OR x #>> '{row,readerId}' = p_reader);
  DELETE FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  GET DIAGNOSTICS v_profile = ROW_COUNT;
  RETURN json_build_object('eventsScrubbed', v_events, 'reports', v_reports, 'profile', v_profile > 0);
END $function$;
