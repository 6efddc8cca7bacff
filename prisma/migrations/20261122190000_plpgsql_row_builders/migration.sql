-- The row builders that read a table (the comment's author, a discussion) become PL/pgSQL.
-- PostgreSQL (before 18) plans the body of a SQL-language function that it cannot inline (one with
-- a FROM clause) on every call; PL/pgSQL keeps its plans for the session. eng_comment_row alone was
-- 0.17 ms of a 0.38 ms eng_post_comment, all of it under the discussion's row lock. Same results:
-- NULL when the row is missing, as the SQL versions returned no row.

CREATE OR REPLACE FUNCTION eng_comment_row(c comments) RETURNS json LANGUAGE plpgsql STABLE AS $$
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = c.tenant_id AND id = c.author_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN json_build_object(
    'id', c.id, 'tenantId', c.tenant_id, 'discussionId', c.discussion_id, 'parentId', c.parent_id,
    'depth', c.depth, 'authorId', c.author_id, 'body', c.body, 'status', c.status, 'pinned', c.pinned,
    'editedAt', eng_iso(c.edited_at), 'deletedAt', eng_iso(c.deleted_at), 'createdAt', eng_iso(c.created_at),
    'reactionCounts', c.reaction_counts::json, 'reactionTotal', c.reaction_total, 'replyCount', c.reply_count,
    'publishedAt', eng_iso(c.published_at),
    'author', json_build_object('tenantId', r.tenant_id, 'id', r.id, 'name', r.name, 'avatarUrl', r.avatar_url));
END $$;

CREATE OR REPLACE FUNCTION eng_comment_json(c comments) RETURNS json LANGUAGE plpgsql STABLE AS $$
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = c.tenant_id AND id = c.author_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN eng_comment_json_by(c, json_build_object('id', r.id, 'name', r.name, 'avatarUrl', r.avatar_url));
END $$;

CREATE OR REPLACE FUNCTION eng_discussion(p_tenant text, p_id text) RETURNS discussions LANGUAGE plpgsql STABLE AS $$
DECLARE
  d discussions;
BEGIN
  SELECT * INTO d FROM discussions WHERE tenant_id = p_tenant AND id = p_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN d;
END $$;
