-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_enqueue_akismet(c comments, p_to text, p_at timestamp with time zone): changed

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
