-- Following a discussion (contract section 19): a new visible comment enqueues, in its own statement,
-- one job of the outbound queue (kind `follow`) when anyone else follows the discussion with `all`;
-- the follow pool of the outbound worker (src/modules/following/engine/fanout.ts) works the job after
-- commit, a batch of followers at a time.

CREATE OR REPLACE FUNCTION public.eng_follow_enqueue(c comments, p_at timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- one probe of the partial index of followers, whatever their number; the fan-out itself is not here
  IF EXISTS (SELECT 1 FROM discussion_subscriptions
              WHERE tenant_id = c.tenant_id AND discussion_id = c.discussion_id AND mode = 'all' AND reader_id <> c.author_id) THEN
    INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
    VALUES (gen_random_uuid(), c.tenant_id, 'follow',
            jsonb_build_object('discussionId', c.discussion_id, 'commentId', c.id, 'authorId', c.author_id, 'after', ''),
            p_at, p_at, p_at);
  END IF;
END $function$;

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
