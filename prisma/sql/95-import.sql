-- An import's last step: depths, reply and comment counts and reaction counts of what it wrote.

CREATE OR REPLACE FUNCTION public.eng_import_recount(p_tenant text, p_discussions text[], p_depth text[], p_reacted text[])
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_locked int;
  v_discussion text;
BEGIN
  PERFORM 1 FROM discussions WHERE tenant_id = p_tenant AND id = ANY(p_discussions) ORDER BY id FOR UPDATE;
  GET DIAGNOSTICS v_locked = ROW_COUNT;
  -- depths where a parent came late: each such discussion's tree walked from its top-level comments
  -- (one discussion per statement, so every step is a range of the (discussion, parent) index)
  FOREACH v_discussion IN ARRAY p_depth LOOP
    WITH RECURSIVE t AS (
      SELECT c.id, 0 AS depth FROM comments c
       WHERE c.tenant_id = p_tenant AND c.discussion_id = v_discussion AND c.parent_id IS NULL
      UNION ALL
      SELECT c.id, t.depth + 1 FROM t
        JOIN comments c ON c.tenant_id = p_tenant AND c.discussion_id = v_discussion AND c.parent_id = t.id
    )
    UPDATE comments c SET depth = t.depth FROM t WHERE c.id = t.id AND c.depth <> t.depth;
  END LOOP;
  WITH counts AS (
    SELECT r.parent_id AS id, count(*)::int AS n FROM unnest(p_discussions) AS u(id)
      CROSS JOIN LATERAL (SELECT c.parent_id FROM comments c
                           WHERE c.tenant_id = p_tenant AND c.discussion_id = u.id AND c.parent_id IS NOT NULL
                             AND c.status = 'approved') r
     GROUP BY r.parent_id
  ), mine AS (
    SELECT r.id, r.reply_count FROM unnest(p_discussions) AS u(id)
      CROSS JOIN LATERAL (SELECT c.id, c.reply_count FROM comments c WHERE c.tenant_id = p_tenant AND c.discussion_id = u.id) r
  )
  UPDATE comments c SET reply_count = COALESCE(counts.n, 0)
    FROM mine LEFT JOIN counts ON counts.id = mine.id
   WHERE c.id = mine.id AND mine.reply_count <> COALESCE(counts.n, 0);
  UPDATE discussions d SET comment_count = x.n
    FROM (SELECT u.id, (SELECT count(*) FROM comments c
                         WHERE c.tenant_id = p_tenant AND c.discussion_id = u.id AND c.status = 'approved')::int AS n
            FROM unnest(p_discussions) AS u(id)) x
   WHERE d.tenant_id = p_tenant AND d.id = x.id AND d.comment_count <> x.n;
  -- a reacted comment's counts: its readers' reactions, each kind at least what the comment counted
  -- already (a source's counts without readers, which our export carries on the comment)
  IF cardinality(p_reacted) > 0 THEN
    UPDATE comments c SET reaction_counts = x.counts, reaction_total = x.total
      FROM (SELECT cc.id, m.counts, m.total
              FROM comments cc
             CROSS JOIN LATERAL (
               SELECT COALESCE(jsonb_object_agg(k.kind, k.n), '{}'::jsonb) AS counts, COALESCE(sum(k.n), 0)::int AS total
                 FROM (SELECT a.kind, max(a.n)::int AS n
                         FROM (SELECT e.key AS kind, e.value::int AS n FROM jsonb_each_text(cc.reaction_counts) e
                               UNION ALL
                               SELECT r.kind, count(*)::int FROM reactions r
                                WHERE r.tenant_id = p_tenant AND r.comment_id = cc.id GROUP BY r.kind) a
                        GROUP BY a.kind HAVING max(a.n) > 0) k) m
             WHERE cc.tenant_id = p_tenant AND cc.id = ANY(p_reacted)) x
     WHERE c.tenant_id = p_tenant AND c.id = x.id;
  END IF;
  RETURN v_locked;
END $function$;
