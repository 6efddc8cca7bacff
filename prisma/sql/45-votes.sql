-- A reader's vote on a comment (1, -1, or 0 to take it back), then what it keeps: the comment's
-- upvotes, downvotes, score and Wilson lower bound (sort=best), changed by the same statement as the
-- votes row, under the discussion's lock (the one lock order), so concurrent votes stay exact.

CREATE OR REPLACE FUNCTION public.eng_vote(p_tenant text, p_comment text, p_reader text, p_name text, p_avatar text, p_moderator boolean, p_value integer, p_at timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar
DECLARE
  d discussions;
  c comments;
  v_old int;
  v_result json;
BEGIN
  d := eng_lock_discussion_of(p_tenant, p_comment);
  c := eng_visible_comment(p_tenant, p_comment, p_moderator, p_reader);
  PERFORM eng_assert_not_banned(p_tenant, p_reader, p_at);
  IF c.author_id = p_reader THEN PERFORM eng_refuse('422', 'comment', 'is the reader''s own: readers cannot vote on their own comments'); END IF;
  IF c.status <> 'approved' THEN PERFORM eng_refuse('409', 'comment_not_approved', 'Only approved comments take votes.'); END IF;
  IF d.state <> 'open' THEN PERFORM eng_assert_writable(d); END IF;
  SELECT value INTO v_old FROM votes WHERE comment_id = p_comment AND reader_id = p_reader;
  v_old := COALESCE(v_old, 0);
  IF v_old = p_value THEN
    -- nothing changes: the same answer, and no event
    RETURN json_build_object('row', eng_vote_json(c, p_reader, p_value), 'events', '[]'::json);
  END IF;
  PERFORM eng_touch_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  IF p_value = 0 THEN
    DELETE FROM votes WHERE comment_id = p_comment AND reader_id = p_reader;
  ELSE
    INSERT INTO votes (tenant_id, comment_id, reader_id, value, created_at, updated_at)
    VALUES (p_tenant, p_comment, p_reader, p_value, p_at, p_at)
    ON CONFLICT (comment_id, reader_id) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at;
  END IF;
  c := eng_shift_votes(c, v_old, p_value);
  v_result := eng_vote_json(c, p_reader, p_value);
  RETURN json_build_object('row', v_result, 'events', array_to_json(ARRAY[eng_append_event(p_tenant, c.discussion_id,
    'reaction_toggled', 'all', NULL, json_build_object('reaction', v_result), p_at)]));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_shift_votes(c comments, p_old integer, p_new integer)
 RETURNS comments
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_up int := c.upvotes + (p_new = 1)::int - (p_old = 1)::int;
  v_down int := c.downvotes + (p_new = -1)::int - (p_old = -1)::int;
BEGIN
  UPDATE comments SET upvotes = v_up, downvotes = v_down, score = v_up - v_down, vote_best = eng_wilson_lower_bound(v_up, v_up + v_down)
   WHERE tenant_id = c.tenant_id AND id = c.id RETURNING * INTO c;
  RETURN c;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_wilson_lower_bound(p_up integer, p_n integer)
 RETURNS double precision
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- the lower bound of the Wilson score interval (z = 1.96, 95 %) for the share of upvotes among votes; 0 with none
  -- (exactly 0 without upvotes, where the formula's floating point would leave a trace either side of 0)
  SELECT CASE WHEN p_up <= 0 OR p_n <= 0 THEN 0::double precision ELSE
    (p_up::double precision / p_n + 1.96 ^ 2 / (2 * p_n)
     - 1.96 * sqrt((p_up::double precision / p_n) * (1 - p_up::double precision / p_n) / p_n + 1.96 ^ 2 / (4 * p_n::double precision ^ 2)))
    / (1 + 1.96 ^ 2 / p_n) END
$function$;

CREATE OR REPLACE FUNCTION public.eng_vote_json(c comments, p_reader text, p_value integer)
 RETURNS json
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT json_build_object('commentId', c.id, 'readerId', p_reader, 'kind', 'vote', 'value', p_value,
                           'score', c.score, 'upvotes', c.upvotes, 'downvotes', c.downvotes)
$function$;
