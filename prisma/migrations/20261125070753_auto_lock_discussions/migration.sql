-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_auto_lock_discussions(p_at timestamp with time zone, p_limit integer): new

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
