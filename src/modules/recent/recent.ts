// Recent comments (contract section 19): the latest visible comments across the tenant's discussions
// (or a few named ones), newest published first, each with its discussion's title and url: what a
// "recent comments" widget and the site's feed show. ONE statement on comments_recent_idx (partial:
// approved comments only, by publication), keyset-paginated by (publishedAt, id).
import { type RequestContext, store } from "../../context/request.js";
import { errors, type FieldError } from "../../lib/errors.js";
import { DISCUSSION_ID_RE, DISCUSSION_ID_RULE } from "../../lib/ids.js";
import { checkLimit, decodeTimeIdCursor, timeIdCursor, toPage, type Page, type PageArgs } from "../../lib/pagination.js";
import type { CommentWithAuthor } from "../comments/dto.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "../comments/comment-row.js";

/** At most this many discussions in one `discussionIds` filter. */
export const MAX_RECENT_DISCUSSIONS = 50;

export interface RecentComment {
  comment: CommentWithAuthor;
  discussionTitle: string | null;
  discussionUrl: string | null;
}

interface RecentRow extends CommentSqlRow {
  discussion_title: string | null;
  discussion_url: string | null;
}

const statements = new Map<string, string>();

function recentStatement(filtered: boolean, after: boolean): { name: string; text: string } {
  const name = `comments_recent_${filtered ? "d" : "all"}_${after ? "a" : "f"}`;
  let text = statements.get(name);
  if (!text) {
    const filter = filtered ? "AND c.discussion_id = ANY($3::text[])" : "";
    const n = filtered ? 4 : 3;
    const keyset = after ? `AND (c.published_at, c.id) < ($${n}::timestamptz, $${n + 1}::text)` : "";
    text = `SELECT ${COMMENT_COLUMNS}, d.title AS discussion_title, d.url AS discussion_url
      FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
      JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
      WHERE c.tenant_id = $1 AND c.status = 'approved' ${filter} ${keyset}
      ORDER BY c.published_at DESC, c.id DESC LIMIT $2`;
    statements.set(name, text);
  }
  return { name, text };
}

/** The discussion ids of a filter: distinct, each a valid id, at most MAX_RECENT_DISCUSSIONS; null: all. */
function checkDiscussionIds(ids: readonly string[] | null | undefined): string[] | null {
  if (ids === null || ids === undefined) return null;
  const problems: FieldError[] = [];
  if (ids.length === 0 || ids.length > MAX_RECENT_DISCUSSIONS) {
    problems.push({ path: "discussionIds", message: `must name 1..${MAX_RECENT_DISCUSSIONS} discussions` });
  }
  ids.forEach((id, i) => {
    if (!DISCUSSION_ID_RE.test(id)) problems.push({ path: `discussionIds[${i}]`, message: DISCUSSION_ID_RULE });
  });
  if (problems.length) throw errors.validation(problems);
  return [...new Set(ids)].sort();
}

/** The latest visible comments of the tenant (or of `discussionIds`), newest published first. Any key. */
export async function listRecentComments(
  ctx: RequestContext,
  args: PageArgs & { discussionIds?: readonly string[] | null },
): Promise<Page<RecentComment>> {
  const limit = checkLimit(args.limit);
  const ids = checkDiscussionIds(args.discussionIds);
  // a cursor belongs to the list it came from: the same filter
  const tag = ids ? `recent:${ids.join(",")}` : "recent";
  const after = args.cursor ? decodeTimeIdCursor(args.cursor, tag) : null;
  const { name, text } = recentStatement(ids !== null, after !== null);
  const rows = await store(ctx).sql.query<RecentRow>(text, [limit + 1, ...(ids ? [ids] : []), ...(after ?? [])], name);
  const items = rows.map((r) => ({ comment: rowToComment(r), discussionTitle: r.discussion_title, discussionUrl: r.discussion_url }));
  // approved comments always have a publication time
  return toPage(items, limit, (i) => timeIdCursor(i.comment.publishedAt ?? i.comment.createdAt, i.comment.id, tag));
}
