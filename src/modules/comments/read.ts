// Reading comments: one by id (with the visibility rules of visibility.ts) and the keyset-paginated
// list of a discussion or of one comment's direct replies. Each is ONE SQL statement after auth:
// the comments with their authors (a join), reaction and reply counts (columns kept by the writes),
// and for a list the discussion's existence in the same statement (its statements and cursors:
// list-order.ts).
import { currentReader, type RequestContext, store, tenantIdOf } from "../../context/request.js";
import type { Discussion } from "../../generated/prisma/client.js";
import { errors } from "../../lib/errors.js";
import { checkLimit, toPage, type Page } from "../../lib/pagination.js";
import { checkDiscussionId } from "../../lib/ids.js";
import type { CommentWithAuthor } from "./dto.js";
import { canModerate, visibleTo } from "./visibility.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "./comment-row.js";
import {
  COMMENT_SORTS,
  LIST_STATUSES,
  VISIBLE_IN_LIST,
  comparePlaces,
  cursorOf,
  decodeAfter,
  listStatement,
  listTag,
  partOf,
  placeOf,
  type CommentSort,
  type DiscussionSqlColumns,
  type ListScope,
  type ListStatus,
  type PageStart,
} from "./list-order.js";

const GET_COMMENT = `SELECT ${COMMENT_COLUMNS} FROM comments c
  JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
 WHERE c.tenant_id = $1 AND c.id = $2`;

export async function getComment(ctx: RequestContext, id: string): Promise<CommentWithAuthor> {
  const rows = await store(ctx).sql.query<CommentSqlRow>(GET_COMMENT, [id], "comment_get");
  const c = rows[0] ? rowToComment(rows[0]) : null;
  if (!c || !(await visibleTo(ctx, c))) throw errors.notFound("Comment");
  return c;
}

export interface ListCommentsArgs {
  sort?: CommentSort | null | undefined;
  parentId?: string | null | undefined;
  /** only comments that reply to none: a thread's first level (each carries its replyCount) */
  topLevel?: boolean | null | undefined;
  status?: ListStatus | null | undefined;
  limit?: number | null | undefined;
  cursor?: string | null | undefined;
}

/**
 * A discussion's comments, flat (each carries parentId and depth); with `topLevel` only those that
 * reply to none; with `parentId` the direct replies of that comment (an id that is no comment of this
 * discussion simply matches nothing).
 * Default status: approved ones plus tombstones of deleted ones that still have visible replies.
 * `status: pending|rejected` lists those instead — the GraphQL field requires moderate_content for it.
 */
export async function listComments(ctx: RequestContext, discussionId: string, args: ListCommentsArgs): Promise<Page<CommentWithAuthor>> {
  return (await readList(ctx, discussionId, args, false)).page;
}

/**
 * `listComments`, and the discussion's row read by the same statement: one round trip, and the
 * discussion (its seq, its count) as it was when the page's rows were read.
 */
export async function listCommentsWithDiscussion(
  ctx: RequestContext,
  discussionId: string,
  args: ListCommentsArgs,
): Promise<{ page: Page<CommentWithAuthor>; discussion: Discussion }> {
  const { page, first } = await readList(ctx, discussionId, args, true);
  const d = first as CommentSqlRow & DiscussionSqlColumns;
  const discussion: Discussion = {
    tenantId: tenantIdOf(ctx),
    id: discussionId,
    title: d.d_title,
    url: d.d_url,
    urlKey: d.d_url_key,
    state: d.d_state,
    seq: d.d_seq,
    commentCount: d.d_comment_count,
    reactionCounts: d.d_reaction_counts,
    createdAt: d.d_created_at,
    updatedAt: d.d_updated_at,
  };
  return { page, discussion };
}

async function readList(
  ctx: RequestContext,
  discussionId: string,
  args: ListCommentsArgs,
  withDiscussion: boolean,
): Promise<{ page: Page<CommentWithAuthor>; first: CommentSqlRow }> {
  checkDiscussionId(discussionId, "discussionId");
  const sort = args.sort ?? "newest";
  const status = args.status ?? "approved";
  const problems = [
    ...(COMMENT_SORTS.includes(sort) ? [] : [{ path: "sort", message: `must be one of ${COMMENT_SORTS.join(", ")}` }]),
    ...(LIST_STATUSES.includes(status) ? [] : [{ path: "status", message: `must be one of ${LIST_STATUSES.join(", ")}` }]),
  ];
  if (args.topLevel && args.parentId) problems.push({ path: "topLevel", message: "lists the first level: it cannot go with parentId" });
  if (problems.length) throw errors.validation(problems);
  const limit = checkLimit(args.limit);
  const scope: ListScope = args.parentId ? "parent" : args.topLevel ? "top" : "all";
  const tag = listTag(discussionId, sort, status, args.parentId, scope);
  const from = args.cursor ? decodeAfter(tag, sort, args.cursor) : null;
  const { name, text } = listStatement(sort, status, scope, from?.start ?? "first", from ? partOf(sort, from.values) : 0, withDiscussion);
  const values: unknown[] = [discussionId, limit + 1, ...(args.parentId ? [args.parentId] : []), ...(from?.values ?? [])];
  const [rows, own] = await Promise.all([
    store(ctx).sql.query<CommentSqlRow>(text, values, name),
    status === "approved" ? ownShadowed(ctx, discussionId) : [],
  ]);
  const first = rows[0];
  if (!first) throw errors.notFound("Discussion");
  const comments = rows.filter((r) => r.id !== null).map(rowToComment);
  const page = toPage(comments, limit, (c) => cursorOf(tag, sort, c));
  if (!own.length) return { page, first };
  const inScope = own.filter((c) => (args.parentId ? c.parentId === args.parentId : scope === "top" ? c.parentId === null : true));
  return { page: { ...page, items: withOwnShadowed(page.items, inScope, sort, from, page.nextCursor !== null) }, first };
}

// The first pages of several comments' replies at once, each as `listComments(…, { parentId, sort:
// "oldest", limit })` reads it (the same rows in the same order: pinned first, then oldest first).
// $2 the parents' ids, $3 each one's limit + 1, $4 the discussion.
const REPLY_PAGES = `SELECT x.* FROM unnest($2::text[], $3::int[]) AS p(id, lim) CROSS JOIN LATERAL (
    SELECT ${COMMENT_COLUMNS} FROM (
      SELECT c.* FROM comments c WHERE c.tenant_id = $1 AND c.discussion_id = $4 AND c.parent_id = p.id AND ${VISIBLE_IN_LIST}
      ORDER BY c.pinned DESC, c.created_at ASC, c.id ASC LIMIT p.lim
    ) c JOIN LATERAL (SELECT r.name, r.avatar_url, r.badge FROM readers r WHERE r.tenant_id = $1 AND r.id = c.author_id LIMIT 1) r ON true
    ORDER BY c.pinned DESC, c.created_at ASC, c.id ASC) x`;

/**
 * The first page of each parent's direct replies, oldest first, in ONE statement: for each parent
 * the page (items, next cursor, cursors) `listComments(ctx, discussionId, { parentId, sort:
 * "oldest", limit })` answers, with the caller's own shadow-banned replies in their places.
 * A thread read level by level (src/modules/indexable/snapshot.ts) asks once per level, not once
 * per comment.
 */
export async function listReplyPages(
  ctx: RequestContext,
  discussionId: string,
  parents: { parentId: string; limit: number }[],
): Promise<Page<CommentWithAuthor>[]> {
  checkDiscussionId(discussionId, "discussionId");
  if (!parents.length) return [];
  const limits = parents.map((p) => checkLimit(p.limit));
  const [rows, own] = await Promise.all([
    store(ctx).sql.query<CommentSqlRow>(
      REPLY_PAGES,
      [parents.map((p) => p.parentId), limits.map((l) => l + 1), discussionId],
      "comments_reply_pages",
    ),
    ownShadowed(ctx, discussionId),
  ]);
  const byParent = new Map<string, CommentWithAuthor[]>();
  for (const r of rows) {
    const c = rowToComment(r);
    const list = byParent.get(c.parentId ?? "");
    if (list) list.push(c);
    else byParent.set(c.parentId ?? "", [c]);
  }
  return parents.map(({ parentId }, i) => {
    const tag = listTag(discussionId, "oldest", "approved", parentId, "parent");
    const page = toPage(byParent.get(parentId) ?? [], limits[i]!, (c) => cursorOf(tag, "oldest", c));
    const mine = own.filter((c) => c.parentId === parentId);
    return mine.length ? { ...page, items: withOwnShadowed(page.items, mine, "oldest", null, page.nextCursor !== null) } : page;
  });
}

// A shadow-banned reader's own comments in a discussion (contract section 21: stored rejected with
// reason shadow_ban, read back by their author as published). comments_shadow_idx (the rejected ones, by author and discussion) finds them.
const OWN_SHADOWED = `SELECT ${COMMENT_COLUMNS} FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  WHERE c.tenant_id = $1 AND c.author_id = $2 AND c.discussion_id = $3 AND c.moderation_reason ->> 'source' = 'shadow_ban'
    AND c.status = 'rejected' ORDER BY c.created_at DESC, c.id DESC LIMIT 500`;

/** The caller's own shadow-banned comments in the discussion: none for an anonymous caller or a moderator (who sees them as they are). */
async function ownShadowed(ctx: RequestContext, discussionId: string): Promise<CommentWithAuthor[]> {
  if (!ctx.identityToken || canModerate(ctx)) return [];
  const reader = await currentReader(ctx).catch(() => null);
  if (!reader) return [];
  const rows = await store(ctx).sql.query<CommentSqlRow>(OWN_SHADOWED, [reader.id, discussionId], "comments_own_shadowed");
  return rows.map(rowToComment);
}

/**
 * The page with the caller's own shadow-banned comments that fall within it, each in its place: after
 * the page's cursor (at it, for a START_AT cursor) and, unless this is the last page, not past its last
 * row, so each shows on exactly one page. The page's cursors stay those of its published rows.
 */
export function withOwnShadowed(
  items: CommentWithAuthor[],
  own: CommentWithAuthor[],
  sort: CommentSort,
  from: { start: PageStart; values: unknown[] } | null,
  more: boolean,
): CommentWithAuthor[] {
  const last = items[items.length - 1];
  const inPage = own.filter((c) => {
    const place = placeOf(sort, c);
    if (from) {
      const past = comparePlaces(sort, place, from.values);
      if (past < 0 || (past === 0 && from.start !== "at")) return false;
    }
    return !more || !last || comparePlaces(sort, place, placeOf(sort, last)) < 0;
  });
  if (!inPage.length) return items;
  return [...items, ...inPage].sort((a, b) => comparePlaces(sort, placeOf(sort, a), placeOf(sort, b)));
}
