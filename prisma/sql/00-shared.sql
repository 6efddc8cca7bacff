-- What every write uses: its refusals, its time format, then, in the order a write meets them, the
-- discussion's lock (the one lock order: the discussion row first), the comment it acts on as the
-- caller may see it, and the refusals of a banned reader, an archived or a locked discussion.

CREATE OR REPLACE FUNCTION public.eng_refuse(p_status text, p_code text, p_detail text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM eng_refuse(p_status, p_code, p_detail, NULL::json);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_refuse(p_status text, p_code text, p_detail text, p_extra json)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'EN' || p_status, MESSAGE = p_code, DETAIL = p_detail, HINT = COALESCE(p_extra::text, '');
END $function$;

CREATE OR REPLACE FUNCTION public.eng_iso(ts timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$function$;

CREATE OR REPLACE FUNCTION public.eng_lock_discussion_of(p_tenant text, p_id text)
 RETURNS discussions
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_discussion text;
  d discussions;
BEGIN
  SELECT discussion_id INTO v_discussion FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  IF v_discussion IS NULL THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = v_discussion FOR UPDATE;
  RETURN d;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_take_seq_of(p_tenant text, p_id text)
 RETURNS discussions
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_discussion text;
  d discussions;
BEGIN
  SELECT discussion_id INTO v_discussion FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  IF v_discussion IS NULL THEN PERFORM eng_refuse('404', 'not_found', 'Comment not found.'); END IF;
  UPDATE discussions SET seq = seq + 1 WHERE tenant_id = p_tenant AND id = v_discussion RETURNING * INTO d;
  RETURN d;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_locked_comment(p_tenant text, p_id text, p_moderator boolean, p_reader text)
 RETURNS comments
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM eng_lock_discussion_of(p_tenant, p_id);
  RETURN eng_visible_comment(p_tenant, p_id, p_moderator, p_reader);
END $function$;

CREATE OR REPLACE FUNCTION public.eng_discussion(p_tenant text, p_id text)
 RETURNS discussions
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  d discussions;
BEGIN
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = p_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN d;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_visible_comment(p_tenant text, p_id text, p_moderator boolean, p_reader text)
 RETURNS comments
 LANGUAGE plpgsql
AS $function$
DECLARE
  c comments;
BEGIN
  SELECT * INTO c FROM comments WHERE tenant_id = p_tenant AND id = p_id;
  IF c.id IS NULL OR NOT eng_visible_to(c, p_moderator, p_reader) THEN
    PERFORM eng_refuse('404', 'not_found', 'Comment not found.');
  END IF;
  RETURN c;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_visible_to(c comments, p_moderator boolean, p_reader text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT c.status = 'approved' OR (c.status = 'deleted' AND c.published_at IS NOT NULL) OR p_moderator
      OR (p_reader IS NOT NULL AND p_reader = c.author_id)
$function$;

CREATE OR REPLACE FUNCTION public.eng_assert_not_banned(p_tenant text, p_reader text, p_at timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  s reader_sanctions;
BEGIN
  -- the sanction in force (one at a time): a ban or suspension refuses the write; a shadow ban
  -- refuses nothing, and the answer says it is one (eng_post_comment stores the comment rejected)
  SELECT * INTO s FROM reader_sanctions
   WHERE tenant_id = p_tenant AND reader_id = p_reader AND lifted_at IS NULL AND (until IS NULL OR until > p_at)
   ORDER BY created_at DESC LIMIT 1;
  IF FOUND AND NOT s.shadow THEN PERFORM eng_refuse_banned(s.until); END IF;
  RETURN FOUND AND s.shadow;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_refuse_banned(p_until timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
-- nullable: p_until
-- The refusal of a write by a reader under a ban (p_until NULL) or a suspension until p_until (found
-- by eng_assert_not_banned, or by eng_post_comment's first statement).
BEGIN
  PERFORM eng_refuse('403', 'reader_banned',
    CASE WHEN p_until IS NULL THEN 'This reader is banned from commenting, reacting and reporting.'
         ELSE format('This reader is suspended from commenting, reacting and reporting until %s.', eng_iso(p_until)) END,
    json_build_object('until', eng_iso(p_until)));
END $function$;

CREATE OR REPLACE FUNCTION public.eng_is_shadowed(c comments)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  -- a shadow ban's comment: stored rejected with the reason shadow_ban (comments_shadow_idx holds a reader's rejected comments by discussion)
  SELECT c.status = 'rejected' AND c.moderation_reason ->> 'source' = 'shadow_ban'
$function$;

CREATE OR REPLACE FUNCTION public.eng_shadow_shown(c comments)
 RETURNS comments
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  -- a shadow-banned comment as its author sees it: published, with no reason
  c.status := 'approved';
  c.published_at := c.created_at;
  c.moderation_reason := NULL;
  RETURN c;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_assert_not_archived(d discussions)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF d.state = 'archived' THEN PERFORM eng_refuse('409', 'discussion_archived', 'The discussion is archived and read-only.'); END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_assert_writable(d discussions)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
-- an open discussion is writable: the busiest writes (a post, a reaction, a vote) call this only when
-- d.state is another, as a PERFORM is a statement the executor sets up on every call
BEGIN
  PERFORM eng_assert_not_archived(d);
  IF d.state = 'locked' THEN PERFORM eng_refuse('409', 'discussion_locked', 'The discussion is locked.'); END IF;
END $function$;
