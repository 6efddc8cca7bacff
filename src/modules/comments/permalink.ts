// A comment's permalink context (contract section 18, GET /comments/{id}/context): the comment, the
// comments it answers (root first) and a cursor of the discussion's list whose page begins with the
// thread's top-level comment. ONE SQL statement: a recursive walk up `parent_id`, each row with its
// author; visibility is then judged row by row as GET /comments/{id} judges one (visibility.ts).
import { type RequestContext, store } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import type { CommentWithAuthor } from "./dto.js";
import { COMMENT_SORTS, startAtCursor, type CommentSort } from "./list-order.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "./comment-row.js";
import { visibleTo } from "./visibility.js";

export interface CommentContext {
  comment: CommentWithAuthor;
  /** the comments it answers that the caller may see, the top-level one first */
  ancestors: CommentWithAuthor[];
  /**
   * `GET /discussions/{d}/comments?sort=<sort>&cursor=<rootCursor>` begins with the top-level ancestor
   * (with `topLevel`: `…&topLevel=true&cursor=<rootCursor>`, the list of the first level)
   */
  rootCursor: string;
}

// The comment (up 0), its parent (up 1), … up to its top-level comment; every table tied to $1.
// CYCLE stops a walk that would come back to a row (ids only ever point at older comments, but an
// import's data is not trusted to).
const CONTEXT = `WITH RECURSIVE chain AS (
    SELECT c.id, c.parent_id, 0 AS up FROM comments c WHERE c.tenant_id = $1 AND c.id = $2
    UNION ALL
    SELECT p.id, p.parent_id, chain.up + 1 FROM chain JOIN comments p ON p.tenant_id = $1 AND p.id = chain.parent_id
  ) CYCLE id SET looped USING path
  SELECT ${COMMENT_COLUMNS} FROM chain
    JOIN comments c ON c.tenant_id = $1 AND c.id = chain.id
    JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
   WHERE NOT chain.looped
   ORDER BY chain.up DESC`;

/**
 * The comment's context for a list sorted by `sort` (default newest): the list of every level, or
 * with `topLevel` the list of the first level (`comments(topLevel: true)`, what a thread shows before
 * its replies). 404 when the caller may not see the comment (as GET /comments/{id}); an ancestor the
 * caller may not see is left out. The cursor starts at the top-level comment, or, when the caller may
 * not see that one, where the first comment of the chain they may see would be (never a hidden
 * comment's keys).
 */
export async function commentContext(
  ctx: RequestContext,
  id: string,
  sort: CommentSort | null | undefined,
  topLevel?: boolean | null,
): Promise<CommentContext> {
  const order = sort ?? "newest";
  if (!COMMENT_SORTS.includes(order)) throw errors.validation([{ path: "sort", message: `must be one of ${COMMENT_SORTS.join(", ")}` }]);
  const rows = await store(ctx).sql.query<CommentSqlRow>(CONTEXT, [id], "comment_context");
  const chain = rows.map(rowToComment);
  const comment = chain.pop();
  if (!comment || comment.id !== id || !(await visibleTo(ctx, comment))) throw errors.notFound("Comment");
  const ancestors: CommentWithAuthor[] = [];
  for (const c of chain) if (await visibleTo(ctx, c)) ancestors.push(c);
  return { comment, ancestors, rootCursor: startAtCursor(ancestors[0] ?? comment, order, !!topLevel) };
}
