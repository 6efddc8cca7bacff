// A discussion as a moderator sees it: every comment whatever its status (pending, rejected and
// deleted included), oldest first, each with its moderation context; and how many comments it has
// of each status. One statement each; callers need moderate_content (the GraphQL fields declare it).
import { type RequestContext, store } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { checkLimit, decodeTimeIdCursor, timeIdCursor, toPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "./comment-row.js";
import { CONTEXT_COLUMNS, CONTEXT_JOINS, contextOf, type CommentInContext, type ContextSqlRow } from "./moderation-context.js";

/** $1 tenant, $2 discussion, $3 limit + 1 (, $4 $5 the cursor's created_at and id). No row: no such discussion. */
const listText = (after: boolean) => `SELECT x.* FROM discussions d LEFT JOIN LATERAL (
    SELECT ${COMMENT_COLUMNS}, ${CONTEXT_COLUMNS} FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
      ${CONTEXT_JOINS}
     WHERE c.tenant_id = d.tenant_id AND c.discussion_id = d.id ${after ? "AND (c.created_at, c.id) > ($4, $5)" : ""}
     ORDER BY c.created_at, c.id LIMIT $3) x ON true
   WHERE d.tenant_id = $1 AND d.id = $2`;
const LIST_FIRST = listText(false);
const LIST_AFTER = listText(true);

/** Every comment of the discussion, oldest first (a parent always comes before its replies). */
export async function listDiscussionComments(ctx: RequestContext, discussionId: string, args: PageArgs): Promise<Page<CommentInContext>> {
  checkDiscussionId(discussionId, "discussionId");
  const limit = checkLimit(args.limit);
  const tag = `moderation:${discussionId}`;
  const after = args.cursor ? decodeTimeIdCursor(args.cursor, tag) : null;
  const values = [discussionId, limit + 1, ...(after ?? [])];
  const rows = after
    ? await store(ctx).sql.query<CommentSqlRow & ContextSqlRow>(LIST_AFTER, values, "comments_moderation_list_a")
    : await store(ctx).sql.query<CommentSqlRow & ContextSqlRow>(LIST_FIRST, values, "comments_moderation_list_f");
  if (rows.length === 0) throw errors.notFound("Discussion");
  const comments = rows.filter((r) => r.id !== null).map((r): CommentInContext => ({ ...rowToComment(r), moderation: contextOf(r) }));
  return toPage(comments, limit, (c) => timeIdCursor(c.createdAt, c.id, tag));
}

export interface CommentStatusCounts {
  approved: number;
  pending: number;
  rejected: number;
  deleted: number;
}

const COUNTS = `SELECT count(c.id) FILTER (WHERE c.status = 'approved')::int AS approved,
    count(c.id) FILTER (WHERE c.status = 'pending')::int AS pending,
    count(c.id) FILTER (WHERE c.status = 'rejected')::int AS rejected,
    count(c.id) FILTER (WHERE c.status = 'deleted')::int AS deleted
  FROM discussions d LEFT JOIN comments c ON c.tenant_id = d.tenant_id AND c.discussion_id = d.id
 WHERE d.tenant_id = $1 AND d.id = $2 GROUP BY d.tenant_id, d.id`;

/** How many comments of each status the discussion has. */
export async function countDiscussionComments(ctx: RequestContext, discussionId: string): Promise<CommentStatusCounts> {
  checkDiscussionId(discussionId, "discussionId");
  const rows = await store(ctx).sql.query<CommentStatusCounts>(COUNTS, [discussionId], "comments_moderation_counts");
  if (!rows[0]) throw errors.notFound("Discussion");
  return rows[0];
}
