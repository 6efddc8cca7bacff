-- A reader's reaction, toggled, with the comment's counts.

CREATE OR REPLACE FUNCTION public.eng_toggle_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar
DECLARE
  d discussions;
  c comments;
  v_active boolean;
  v_n int;
  v_counts jsonb;
  v_result json;
BEGIN
  d := eng_take_seq_of(p_tenant, p_comment);
  c := eng_visible_comment(p_tenant, p_comment, p_moderator, p_reader);
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  IF c.status <> 'approved' THEN PERFORM eng_refuse('409', 'comment_not_approved', 'Only approved comments take reactions.'); END IF;
  IF d.state <> 'open' THEN PERFORM eng_assert_writable(d); END IF;
  PERFORM eng_touch_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  DELETE FROM reactions WHERE comment_id = p_comment AND reader_id = p_reader AND kind = p_kind;
  v_active := NOT FOUND;
  IF v_active THEN
    INSERT INTO reactions (tenant_id, comment_id, reader_id, kind, created_at) VALUES (p_tenant, p_comment, p_reader, p_kind, p_at);
  END IF;
  v_n := COALESCE((c.reaction_counts ->> p_kind)::int, 0) + CASE WHEN v_active THEN 1 ELSE -1 END;
  v_counts := CASE WHEN v_n > 0 THEN c.reaction_counts || jsonb_build_object(p_kind, v_n) ELSE c.reaction_counts - p_kind END;
  UPDATE comments SET reaction_counts = v_counts,
         reaction_total = (SELECT COALESCE(sum(value::int), 0) FROM jsonb_each_text(v_counts))
   WHERE tenant_id = p_tenant AND id = p_comment;
  v_result := json_build_object('commentId', p_comment, 'readerId', p_reader, 'kind', p_kind, 'active', v_active, 'counts', v_counts::json);
  RETURN json_build_object('row', v_result, 'events', array_to_json(ARRAY[eng_insert_event(p_tenant, c.discussion_id, d.seq,
    'reaction_toggled', 'all', NULL, json_build_object('reaction', v_result), p_at, false, NULL)]));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_toggle_remote_reaction(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_kind text, p_at timestamp with time zone, p_remote_object text, p_remote_actor text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar
-- A remote Like (the fediverse's inbox): the reaction toggled as eng_toggle_reaction toggles it, and
-- in the same statement the Like's row in federation_objects (p_remote_object, its id;
-- p_remote_actor, its actor), written as it turns the reaction on, deleted as it turns it off. A
-- function of its own, so that a local toggle's statement is not one parameter longer.
DECLARE
  v_result json;
BEGIN
  v_result := eng_toggle_reaction(p_tenant, p_comment, p_reader, p_name, p_avatar, p_moderator, p_kind, p_at);
  IF (v_result #>> '{row,active}')::boolean THEN
    INSERT INTO federation_objects (tenant_id, object_id, kind, comment_id, reader_id, actor_id, created_at)
    VALUES (p_tenant, p_remote_object, 'like', p_comment, p_reader, p_remote_actor, p_at)
    ON CONFLICT DO NOTHING;
  ELSE
    DELETE FROM federation_objects WHERE tenant_id = p_tenant AND object_id = p_remote_object AND kind = 'like';
  END IF;
  RETURN v_result;
END $function$;

-- A reader's reaction on the discussion itself (a page reaction), toggled, with the discussion's
-- counts. Like a post, it creates the discussion it names when there is none yet.

CREATE OR REPLACE FUNCTION public.eng_toggle_discussion_reaction(p_tenant text, p_discussion text, p_reader text, p_name text, p_avatar text, p_kind text, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar
DECLARE
  d discussions;
  v_active boolean;
  v_n int;
  v_counts jsonb;
  v_result json;
BEGIN
  -- 1. outside the discussion's lock
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  -- 2. the discussion's row (created when new, as a post does): locked, its next seq
  INSERT INTO discussions AS x (tenant_id, id, seq, created_at, updated_at)
  VALUES (p_tenant, p_discussion, 1, p_at, p_at)
  ON CONFLICT (tenant_id, id) DO UPDATE SET seq = x.seq + 1
  RETURNING * INTO d;
  -- 3. under it
  IF d.state <> 'open' THEN PERFORM eng_assert_writable(d); END IF;
  PERFORM eng_touch_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  DELETE FROM page_reactions WHERE tenant_id = p_tenant AND discussion_id = p_discussion AND reader_id = p_reader AND kind = p_kind;
  v_active := NOT FOUND;
  IF v_active THEN
    INSERT INTO page_reactions (tenant_id, discussion_id, reader_id, kind, created_at) VALUES (p_tenant, p_discussion, p_reader, p_kind, p_at);
  END IF;
  v_n := COALESCE((d.reaction_counts ->> p_kind)::int, 0) + CASE WHEN v_active THEN 1 ELSE -1 END;
  v_counts := CASE WHEN v_n > 0 THEN d.reaction_counts || jsonb_build_object(p_kind, v_n) ELSE d.reaction_counts - p_kind END;
  UPDATE discussions SET reaction_counts = v_counts WHERE tenant_id = p_tenant AND id = p_discussion;
  v_result := json_build_object('discussionId', p_discussion, 'commentId', NULL, 'readerId', p_reader, 'kind', p_kind,
                                'active', v_active, 'counts', v_counts::json);
  RETURN json_build_object('row', v_result, 'events', array_to_json(ARRAY[eng_insert_event(p_tenant, p_discussion, d.seq,
    'reaction_toggled', 'all', NULL, json_build_object('reaction', v_result), p_at, false, NULL)]));
END $function$;
