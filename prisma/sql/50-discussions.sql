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
    'createdAt', eng_iso(d.created_at), 'updatedAt', eng_iso(d.updated_at))
$function$;
