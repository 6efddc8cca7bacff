// Reading comments: one by id (with the visibility rules of comments-shared.ts) and the keyset-
// paginated list of a discussion or of one comment's direct replies.
import { db, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { Comment, Prisma } from "../../generated/prisma/client.js";
import { errors } from "../../lib/errors.js";
import { checkLimit, decodeCursor, keysetAfter, orderByOf, toPage, type CursorValue, type Page, type SortKey } from "../../lib/pagination.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { WITH_AUTHOR, type CommentWithAuthor } from "./dto.js";
import { visibleTo } from "./visibility.js";

export const COMMENT_SORTS = ["newest", "oldest", "top"] as const;
export type CommentSort = (typeof COMMENT_SORTS)[number];
export const LIST_STATUSES = ["approved", "pending", "rejected"] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];

export async function getComment(ctx: RequestContext, id: string): Promise<CommentWithAuthor> {
  const c = await db(ctx).comment.findUnique({ where: { id }, include: WITH_AUTHOR });
  if (!c || !(await visibleTo(ctx, c))) throw errors.notFound("Comment");
  return c;
}

/** Pinned first, then the sort's own keys; `id` breaks ties so the order is total. */
const ORDERS: Record<CommentSort, SortKey[]> = {
  newest: [
    { field: "createdAt", dir: "desc" },
    { field: "id", dir: "desc" },
  ],
  oldest: [
    { field: "createdAt", dir: "asc" },
    { field: "id", dir: "asc" },
  ],
  top: [
    { field: "reactionTotal", dir: "desc" },
    { field: "createdAt", dir: "desc" },
    { field: "id", dir: "desc" },
  ],
};

function cursorOf(sort: CommentSort, c: Comment): CursorValue[] {
  const rest = ORDERS[sort].map((k) => {
    const v = c[k.field as "createdAt" | "id" | "reactionTotal"];
    return v instanceof Date ? v.getTime() : v;
  });
  return [sort, c.pinned, ...rest];
}

/**
 * Rows strictly after the cursor in the order (pinned desc, ...keys). Prisma has no `lt` on
 * booleans, so the pinned step is spelled out: after a pinned row come the later pinned rows and
 * every unpinned one; after an unpinned row only later unpinned rows.
 */
function afterCursor(sort: CommentSort, cursor: string): Prisma.CommentWhereInput {
  const keys = ORDERS[sort];
  const values = decodeCursor(cursor, keys.length + 2);
  const [tag, pinned, ...rest] = values;
  const bad = () => errors.validation([{ path: "cursor", message: "is not a cursor this list issued" }]);
  if (tag !== sort || typeof pinned !== "boolean") throw bad();
  const restValues = rest.map((v, i) => {
    const field = keys[i]!.field;
    if (field === "createdAt") {
      if (typeof v !== "number" || !Number.isFinite(v)) throw bad();
      return new Date(v);
    }
    if (field === "reactionTotal" ? typeof v !== "number" : typeof v !== "string") throw bad();
    return v;
  });
  const samePinned = { pinned, ...keysetAfter(keys, restValues) } as Prisma.CommentWhereInput;
  return pinned ? { OR: [samePinned, { pinned: false }] } : samePinned;
}

export interface ListCommentsArgs {
  sort?: CommentSort | null | undefined;
  parentId?: string | null | undefined;
  status?: ListStatus | null | undefined;
  limit?: number | null | undefined;
  cursor?: string | null | undefined;
}

/**
 * A discussion's comments, flat (each carries parentId and depth), or with `parentId` the direct
 * replies of that comment (an id that is no comment of this discussion simply matches nothing).
 * Default status: approved ones plus tombstones of deleted ones that still have visible replies.
 * `status: pending|rejected` lists those instead — the GraphQL field requires moderate_content for
 * it. `include` is the relation selection of the caller (the GraphQL layer passes what the query
 * asks for, so authors come in the same findMany); by default the author.
 */
export async function listComments(
  ctx: RequestContext,
  discussionId: string,
  args: ListCommentsArgs,
  include: Prisma.CommentInclude = WITH_AUTHOR,
): Promise<Page<Comment>> {
  checkDiscussionId(discussionId, "discussionId");
  const sort = args.sort ?? "newest";
  const status = args.status ?? "approved";
  const problems = [
    ...(COMMENT_SORTS.includes(sort) ? [] : [{ path: "sort", message: `must be one of ${COMMENT_SORTS.join(", ")}` }]),
    ...(LIST_STATUSES.includes(status) ? [] : [{ path: "status", message: `must be one of ${LIST_STATUSES.join(", ")}` }]),
  ];
  if (problems.length) throw errors.validation(problems);
  const limit = checkLimit(args.limit);
  const after = args.cursor ? afterCursor(sort, args.cursor) : null;
  const scoped = db(ctx);
  const discussion = await scoped.discussion.findUnique({
    where: { tenantId_id: { tenantId: tenantIdOf(ctx), id: discussionId } },
    select: { id: true },
  });
  if (!discussion) throw errors.notFound("Discussion");
  const visibility: Prisma.CommentWhereInput =
    status === "approved" ? { OR: [{ status: "approved" }, { status: "deleted", replyCount: { gt: 0 } }] } : { status };
  const rows = await scoped.comment.findMany({
    where: {
      discussionId,
      ...(args.parentId ? { parentId: args.parentId } : {}),
      AND: [visibility, ...(after ? [after] : [])],
    },
    orderBy: [{ pinned: "desc" }, ...(orderByOf(ORDERS[sort]) as Prisma.CommentOrderByWithRelationInput[])],
    take: limit + 1,
    include,
  });
  return toPage(rows, limit, (c) => cursorOf(sort, c));
}
