-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_search_project(p_tenants text[], p_discussions text[], p_limit integer): changed

CREATE OR REPLACE FUNCTION public.eng_search_project(p_tenants text[], p_discussions text[], p_limit integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: none
-- One step of the projector over the discussions (p_tenants[i], p_discussions[i]), of every tenant:
-- for each, its position row (made at 0 when missing) locked, then the events after it up to its head
-- applied (p_limit events in all, the rest left to the next step): the documents of the comments they
-- name made again, the position moved past them. The rows are locked one discussion at a time in one
-- order, so two projectors given the same discussions wait for each other (never a deadlock) and the
-- second finds the position the first left: each event is applied once. Events the log no longer
-- holds (its retention dropped their days while the projector was behind) leave the changed comments
-- unknown: such a discussion is left where it is and answered in `gaps`, for eng_search_rebuild to
-- make its documents again from its comments (a statement of its own, with a longer limit: a whole
-- discussion's). Answers {"events": events passed, "more": [[tenant, discussion], …] left for the
-- next step, "gaps": [[tenant, discussion], …], "lags": seconds from each applied event's time to
-- now}.
DECLARE
  k record;
  v_pos int;
  v_head int;
  v_to int;
  v_found int;
  v_ids text[];
  v_events int := 0;
  v_more json[] := ARRAY[]::json[];
  v_gaps json[] := ARRAY[]::json[];
  v_lags real[] := ARRAY[]::real[];
  v_lag real[];
BEGIN
  FOR k IN SELECT DISTINCT u.t, u.d FROM unnest(p_tenants, p_discussions) AS u(t, d) ORDER BY u.t, u.d LOOP
    IF v_events >= p_limit THEN
      v_more := v_more || json_build_array(k.t, k.d);
      CONTINUE;
    END IF;
    INSERT INTO search_positions (tenant_id, discussion_id, seq) VALUES (k.t, k.d, 0) ON CONFLICT DO NOTHING;
    SELECT seq INTO v_pos FROM search_positions WHERE tenant_id = k.t AND discussion_id = k.d FOR UPDATE;
    -- the head after the lock: every event up to it has committed, so the read below sees them all
    SELECT seq INTO v_head FROM discussions WHERE tenant_id = k.t AND id = k.d;
    CONTINUE WHEN v_head IS NULL OR v_head <= v_pos;
    v_to := LEAST(v_head, v_pos + p_limit - v_events);
    SELECT count(*)::int,
           COALESCE(array_agg(DISTINCT e.payload #>> '{data,comment,id}')
                      FILTER (WHERE e.type IN ('comment_created', 'comment_edited', 'comment_deleted')), ARRAY[]::text[]),
           array_agg(extract(epoch FROM clock_timestamp() - e.occurred_at)::real)
      INTO v_found, v_ids, v_lag
      FROM events e
     WHERE e.tenant_id = k.t AND e.discussion_id = k.d AND e.seq > v_pos AND e.seq <= v_to;
    IF v_found < v_to - v_pos THEN
      v_gaps := v_gaps || json_build_array(k.t, k.d);
      CONTINUE;
    END IF;
    IF cardinality(v_ids) > 0 THEN
      PERFORM eng_search_index(k.t, k.d, v_ids);
    END IF;
    UPDATE search_positions SET seq = v_to WHERE tenant_id = k.t AND discussion_id = k.d;
    v_events := v_events + (v_to - v_pos);
    v_lags := v_lags || v_lag;
    IF v_to < v_head THEN v_more := v_more || json_build_array(k.t, k.d); END IF;
  END LOOP;
  RETURN json_build_object('events', v_events, 'more', array_to_json(v_more), 'gaps', array_to_json(v_gaps),
                           'lags', array_to_json(v_lags));
END $function$;
