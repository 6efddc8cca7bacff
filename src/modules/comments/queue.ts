// The moderation queue across every discussion of the tenant: pending (or rejected) comments with
// their moderation context, one statement a page.
import { type RequestContext, store } from "../../context/request.js";
import { checkLimit, decodeTimeIdCursor, timeIdCursor, toPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "./comment-row.js";
import { CONTEXT_COLUMNS, CONTEXT_JOINS, contextOf, type CommentInContext, type ContextSqlRow } from "./moderation-context.js";

export const QUEUE_STATUSES = ["pending", "rejected"] as const;
export type QueueStatus = (typeof QUEUE_STATUSES)[number];
export const QUEUE_SORTS = ["oldest", "newest"] as const;
export type QueueSort = (typeof QUEUE_SORTS)[number];

const statements = new Map<string, { name: string; text: string }>();

function queueStatement(status: QueueStatus, sort: QueueSort, after: boolean): { name: string; text: string } {
  const name = `comments_queue_ctx_${status}_${sort}_${after ? "a" : "f"}`;
  let statement = statements.get(name);
  if (!statement) {
    const dir = sort === "newest" ? "DESC" : "ASC";
    const keyset = after ? `AND (c.created_at, c.id) ${sort === "newest" ? "<" : ">"} ($3, $4)` : "";
    const text = `SELECT ${COMMENT_COLUMNS}, ${CONTEXT_COLUMNS} FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
       ${CONTEXT_JOINS}
       WHERE c.tenant_id = $1 AND c.status = '${status}' ${keyset}
       ORDER BY c.created_at ${dir}, c.id ${dir} LIMIT $2`;
    statements.set(name, (statement = { name, text }));
  }
  return statement;
}

/**
 * The moderation queue across every discussion of the tenant (contract section 10): pending (or
 * rejected) comments, oldest first by default, each with its moderation context (moderation-context.ts).
 * One statement; cursors are bound to status and sort.
 * Callers need moderate_content (the GraphQL field declares it).
 */
export async function listQueue(
  ctx: RequestContext,
  args: PageArgs & { status?: QueueStatus | null; sort?: QueueSort | null },
): Promise<Page<CommentInContext>> {
  const status = args.status ?? "pending";
  const sort = args.sort ?? "oldest";
  const limit = checkLimit(args.limit);
  const tag = `queue:${status}:${sort}`;
  const after = args.cursor ? decodeTimeIdCursor(args.cursor, tag) : null;
  const { name, text } = queueStatement(status, sort, !!after);
  const rows = await store(ctx).sql.query<CommentSqlRow & ContextSqlRow>(text, [limit + 1, ...(after ?? [])], name);
  const comments = rows.map((r): CommentInContext => ({ ...rowToComment(r), moderation: contextOf(r) }));
  return toPage(comments, limit, (c) => timeIdCursor(c.createdAt, c.id, tag));
}
