-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_set_comment_status(p_tenant text, p_id text, p_to text, p_at timestamp with time zone): changed
-- eng_enqueue_alerts(p_tenant text, p_trigger text, p_comment text, p_reason jsonb, p_at timestamp with time zone): changed
-- eng_enqueue_akismet(c comments, p_to text, p_at timestamp with time zone): new

CREATE OR REPLACE FUNCTION public.eng_set_comment_status(p_tenant text, p_id text, p_to text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
DECLARE
  d discussions;
  c comments;
  v_events json[];
BEGIN
  c := eng_locked_comment(p_tenant, p_id, true, NULL);
  d := eng_discussion(p_tenant, c.discussion_id);
  IF c.status = 'deleted' THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  PERFORM eng_assert_not_archived(d);
  IF c.status::text = p_to THEN RETURN eng_result(c, ARRAY[]::json[]); END IF;
  -- what Akismet is told of it (submit-ham / submit-spam), queued with the change
  PERFORM eng_enqueue_akismet(c, p_to, p_at);
  v_events := eng_change_status(c, p_to, jsonb_strip_nulls(jsonb_build_object('source', 'moderator', 'decision', p_to,
    'previous', CASE WHEN c.moderation_reason ->> 'source' = 'moderator' THEN c.moderation_reason -> 'previous'
                     ELSE c.moderation_reason END)), p_at);
  SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  RETURN eng_result(c, v_events);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_enqueue_alerts(p_tenant text, p_trigger text, p_comment text, p_reason jsonb, p_at timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
-- Chat alerts (contract section 21, src/modules/alerts/): one delivery row of kind `alert` for each of
-- the tenant's settings `alerts` whose `on` lists p_trigger (pending | hook_hold | reported), in the
-- transaction of the change itself. The webhook worker claims, sends and retries them as it does
-- webhook jobs; the message (its text, its Approve and Reject links) is made when it is sent.
DECLARE
  v_jobs int;
BEGIN
  INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), t.id, 'alert',
         jsonb_build_object('alertId', a ->> 'id', 'trigger', p_trigger, 'commentId', p_comment, 'reason', p_reason),
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
-- Akismet learns from the moderators (contract section 21, src/modules/akismet/engine/feedback-jobs.ts):
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
