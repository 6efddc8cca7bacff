-- The counts an import leaves right (src/modules/portability/import-writer.ts). Imported history is
-- written in bulk without events, so afterwards, under each discussion's lock (taken in id order, one
-- statement per group of discussions), this recomputes what the write functions keep incrementally:
-- the depth of comments whose parent arrived late (p_depth: their discussions), every comment's
-- reply count and the discussion's comment count (p_discussions), and the reaction counts of the
-- comments that got reactions (p_reacted). No event is appended: each discussion's seq is untouched,
-- so the next post continues from it. Answers how many discussions it locked.
CREATE OR REPLACE FUNCTION eng_import_recount(p_tenant text, p_discussions text[], p_depth text[], p_reacted text[])
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_locked int;
BEGIN
  PERFORM 1 FROM discussions WHERE tenant_id = p_tenant AND id = ANY(p_discussions) ORDER BY id FOR UPDATE;
  GET DIAGNOSTICS v_locked = ROW_COUNT;
  IF cardinality(p_depth) > 0 THEN
    WITH RECURSIVE t AS (
      SELECT c.id, c.discussion_id, 0 AS depth FROM comments c
       WHERE c.tenant_id = p_tenant AND c.discussion_id = ANY(p_depth) AND c.parent_id IS NULL
      UNION ALL
      SELECT c.id, c.discussion_id, t.depth + 1 FROM t
        JOIN comments c ON c.tenant_id = p_tenant AND c.discussion_id = t.discussion_id AND c.parent_id = t.id
    )
    UPDATE comments c SET depth = t.depth FROM t WHERE c.id = t.id AND c.depth <> t.depth;
  END IF;
  UPDATE comments c SET reply_count = x.n
    FROM (SELECT p.id, count(r.id)::int AS n FROM comments p
            LEFT JOIN comments r ON r.tenant_id = p_tenant AND r.discussion_id = p.discussion_id AND r.parent_id = p.id
                                AND r.status = 'approved'
           WHERE p.tenant_id = p_tenant AND p.discussion_id = ANY(p_discussions)
           GROUP BY p.id) x
   WHERE c.id = x.id AND c.reply_count <> x.n;
  UPDATE discussions d SET comment_count = x.n
    FROM (SELECT u.id, (SELECT count(*) FROM comments c
                         WHERE c.tenant_id = p_tenant AND c.discussion_id = u.id AND c.status = 'approved')::int AS n
            FROM unnest(p_discussions) AS u(id)) x
   WHERE d.tenant_id = p_tenant AND d.id = x.id AND d.comment_count <> x.n;
  IF cardinality(p_reacted) > 0 THEN
    UPDATE comments c SET reaction_counts = COALESCE(x.counts, '{}'::jsonb), reaction_total = COALESCE(x.total, 0)
      FROM (SELECT u.id, k.counts, k.total FROM unnest(p_reacted) AS u(id)
              LEFT JOIN (SELECT g.comment_id, jsonb_object_agg(g.kind, g.n) AS counts, sum(g.n)::int AS total
                           FROM (SELECT comment_id, kind, count(*)::int AS n FROM reactions
                                  WHERE tenant_id = p_tenant AND comment_id = ANY(p_reacted) GROUP BY 1, 2) g
                          GROUP BY g.comment_id) k ON k.comment_id = u.id) x
     WHERE c.tenant_id = p_tenant AND c.id = x.id;
  END IF;
  RETURN v_locked;
END $$;
