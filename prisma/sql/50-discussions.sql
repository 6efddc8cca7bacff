-- A discussion locked, unlocked or archived, and the discussion's JSON its events carry.

CREATE OR REPLACE FUNCTION public.eng_set_discussion_state(p_tenant text, p_id text, p_to text, p_event text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
DECLARE
  d discussions;
BEGIN
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = p_id FOR UPDATE;
  IF d.id IS NULL THEN PERFORM eng_refuse('404', 'not_found', 'Discussion not found.'); END IF;
  PERFORM eng_assert_not_archived(d);
  IF d.state::text = p_to THEN
    RETURN json_build_object('row', eng_discussion_json(d), 'events', '[]'::json);
  END IF;
  UPDATE discussions SET state = p_to::"DiscussionState", updated_at = p_at WHERE tenant_id = p_tenant AND id = p_id RETURNING * INTO d;
  RETURN json_build_object('row', eng_discussion_json(d), 'events', array_to_json(ARRAY[eng_append_event(p_tenant, p_id, p_event, 'all', NULL,
    json_build_object('discussion', eng_discussion_json(d)), p_at)]));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_discussion_json(d discussions)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object('id', d.id, 'title', d.title, 'url', d.url, 'state', d.state,
    'commentCount', d.comment_count, 'counts', json_build_object('comments', d.comment_count),
    'reactions', d.reaction_counts,
    'createdAt', eng_iso(d.created_at), 'updatedAt', eng_iso(d.updated_at))
$function$;

CREATE OR REPLACE FUNCTION public.eng_auto_lock_discussions(p_at timestamp with time zone, p_limit integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- Auto-close (contract section 21): locks, as POST …/lock does (eng_set_discussion_state: one
-- discussion_locked event each), up to p_limit open discussions older than their tenant's
-- autoLockAfterDays (0: never), oldest first, each audited as done by the system. One instance at a
-- time (a transaction-scoped advisory lock: another instance's pass answers 0 at once); a discussion
-- locked meanwhile by someone else is passed over (SKIP LOCKED) or, already locked, changes nothing.
DECLARE
  d record;
  v_result json;
  v_locked int := 0;
  v_events json[] := ARRAY[]::json[];
BEGIN
  IF NOT pg_try_advisory_xact_lock(4207311879) THEN
    RETURN json_build_object('row', json_build_object('locked', 0), 'events', '[]'::json);
  END IF;
  FOR d IN
    SELECT ds.tenant_id, ds.id, (t.settings ->> 'autoLockAfterDays')::int AS days
      FROM tenants t
      JOIN discussions ds ON ds.tenant_id = t.id
     WHERE COALESCE((t.settings ->> 'autoLockAfterDays')::int, 0) > 0
       AND ds.state = 'open'
       AND ds.created_at <= p_at - make_interval(days => (t.settings ->> 'autoLockAfterDays')::int)
     ORDER BY ds.created_at
     LIMIT p_limit
       FOR UPDATE OF ds SKIP LOCKED
  LOOP
    v_result := eng_set_discussion_state(d.tenant_id, d.id, 'locked', 'discussion_locked', p_at);
    IF json_array_length(v_result -> 'events') > 0 THEN
      v_locked := v_locked + 1;
      SELECT v_events || array_agg(e) INTO v_events FROM json_array_elements(v_result -> 'events') e;
      INSERT INTO audit_log (id, tenant_id, created_at, actor_type, actor_id, actor_label, action, resource_type, resource_id, details)
      VALUES ('aud_' || translate(encode(substr(decode(replace(gen_random_uuid()::text, '-', ''), 'hex'), 1, 12), 'base64'), '+/', '-_'),
              d.tenant_id, p_at, 'system', 'auto-close', 'auto-close', 'discussion.lock', 'discussion', d.id,
              jsonb_build_object('autoLockAfterDays', d.days));
    END IF;
  END LOOP;
  RETURN json_build_object('row', json_build_object('locked', v_locked), 'events', array_to_json(v_events));
END $function$;
