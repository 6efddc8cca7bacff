// What a moderator needs beside a comment to judge it: the discussion's title and the comment it
// replies to (author and an excerpt). The moderation statements (the queue, a discussion's comments
// of every status) read it in the same statement through CONTEXT_JOINS; any other comment reads it
// with one statement when asked. Exposed only with moderate_content (graphql.ts): a parent may be
// pending or rejected.
import { type RequestContext, store } from "../../context/request.js";
import type { CommentWithAuthor } from "./dto.js";

/** How much of the parent's body a moderator sees beside a reply. */
export const EXCERPT_CHARS = 200;

export interface ModerationContext {
  discussionTitle: string | null;
  parent: {
    id: string;
    status: CommentWithAuthor["status"];
    excerpt: string;
    author: { tenantId: string; id: string; name: string; avatarUrl: string | null; badge: string | null };
  } | null;
}

/** A comment read by a moderation statement carries its context. */
export type CommentInContext = CommentWithAuthor & { moderation?: ModerationContext };

/** Columns and joins added to a statement over `comments c` (c's tenant names every joined row). */
export const CONTEXT_COLUMNS = `xd.title AS ctx_discussion_title, xp.id AS ctx_parent_id, xp.status::text AS ctx_parent_status,
  left(xp.body, ${EXCERPT_CHARS}) AS ctx_parent_excerpt, xp.author_id AS ctx_parent_author_id, COALESCE(xp.author_name, xr.name) AS ctx_parent_author_name,
  xr.avatar_url AS ctx_parent_author_avatar_url, xr.badge AS ctx_parent_author_badge`;
export const CONTEXT_JOINS = `LEFT JOIN discussions xd ON xd.tenant_id = c.tenant_id AND xd.id = c.discussion_id
  LEFT JOIN comments xp ON xp.tenant_id = c.tenant_id AND xp.id = c.parent_id
  LEFT JOIN readers xr ON xr.tenant_id = xp.tenant_id AND xr.id = xp.author_id`;

export interface ContextSqlRow {
  tenant_id: string;
  ctx_discussion_title: string | null;
  ctx_parent_id: string | null;
  ctx_parent_status: string | null;
  ctx_parent_excerpt: string | null;
  ctx_parent_author_id: string | null;
  ctx_parent_author_name: string | null;
  ctx_parent_author_avatar_url: string | null;
  ctx_parent_author_badge: string | null;
}

export function contextOf(r: ContextSqlRow): ModerationContext {
  return {
    discussionTitle: r.ctx_discussion_title,
    parent: r.ctx_parent_id
      ? {
          id: r.ctx_parent_id,
          status: (r.ctx_parent_status ?? "approved") as CommentWithAuthor["status"],
          excerpt: r.ctx_parent_excerpt ?? "",
          author: {
            tenantId: r.tenant_id,
            id: r.ctx_parent_author_id ?? "",
            name: r.ctx_parent_author_name ?? "",
            avatarUrl: r.ctx_parent_author_avatar_url,
            badge: r.ctx_parent_author_badge,
          },
        }
      : null,
  };
}

const CONTEXT_OF_ONE = `SELECT c.tenant_id, ${CONTEXT_COLUMNS} FROM comments c ${CONTEXT_JOINS} WHERE c.tenant_id = $1 AND c.id = $2`;

/** The comment's context: read with it, or (a comment from anywhere else) with one statement now. */
export async function moderationContextOf(ctx: RequestContext, c: CommentInContext): Promise<ModerationContext> {
  if (c.moderation) return c.moderation;
  const rows = await store(ctx).sql.query<ContextSqlRow>(CONTEXT_OF_ONE, [c.id], "comment_moderation_context");
  return rows[0] ? contextOf(rows[0]) : { discussionTitle: null, parent: null };
}
