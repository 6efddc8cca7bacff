// What an indexable thread shows (contract section 23): a discussion's page of top-level comments
// in a sort, each with its replies nested, read through the same lists the API reads
// (src/modules/comments/read.ts: `listComments`' statement with the discussion's row beside the page,
// and `listReplyPages`, each parent's first page of replies as `listComments` with its parentId
// answers it, one statement per level, REPLY_LEVELS at most: the caller's visibility, shadow bans, sorts and cursors), so
// the fragment shows exactly what a reader without an identity sees through REST or GraphQL. The
// discussion's row (and its event seq) comes from the page's own statement: a stream resumed from
// that seq (the thread element's upgrade) misses nothing written after the page was read.
// A replies page (`parentId`): one comment, with the page of its direct replies at `cursor`, each
// with its own replies nested the same way: where a comment's replies cut off in a page, its
// "more replies" link leads there, so every visible comment is reachable through plain links.
import type { RequestContext } from "../../context/request.js";
import type { Discussion } from "../../generated/prisma/client.js";
import { errors } from "../../lib/errors.js";
import type { Settings } from "../../tenancy/settings/tree.js";
import type { CommentWithAuthor } from "../comments/dto.js";
import { getComment, listCommentsWithDiscussion, listReplyPages } from "../comments/read.js";
import type { CommentSort } from "../comments/list-order.js";
import { getSettings } from "../settings/settings.js";
import type { Page } from "../../lib/pagination.js";
import { blueskyPostOf } from "../bluesky/links.js";

/** Top-level comments per page: the thread element's first page. */
export const TOP_LEVEL_PER_PAGE = 20;
/** Replies read per comment (oldest first, as the thread element shows them); a replies page's own page of them too. */
export const REPLIES_PER_COMMENT = 20;
/** Replies read per page, all levels together: past it, deeper replies are behind "more replies" links. */
export const REPLIES_PER_PAGE = 200;
/**
 * Levels of replies read below a page's listed comments (one statement each): a comment at the last
 * level with replies links its replies page, which shows the next levels, as past the budget. So a
 * page costs at most 1 + REPLY_LEVELS statements however deep a chain of replies goes.
 */
export const REPLY_LEVELS = 10;

/** Where a page read ends, as a Relay page says it: whether more follow, and the last cursor (the next page's, or the last item's). */
export interface PageEnd {
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface ThreadNode {
  comment: CommentWithAuthor;
  replies: ThreadNode[];
  /** the end of the replies read (null: none were read) */
  repliesEnd: PageEnd | null;
}

export interface ThreadSnapshot {
  discussion: Discussion;
  settings: Settings;
  sort: CommentSort;
  /** the page's first cursor (null: the list's start) */
  cursor: string | null;
  /** a replies page's comment (its only top node), null for a page of the discussion's top-level comments */
  parentId: string | null;
  /** the page's comments: the top-level ones, or on a replies page the comment whose replies it pages */
  top: ThreadNode[];
  /** where the paged list ends: the top-level list's, or on a replies page the comment's replies' */
  topEnd: PageEnd;
  /** a page with no discussion yet (the fragment asked by url): nothing stored, so no date either */
  unsaved?: boolean;
  /** where the Bluesky post the discussion is linked to is (its replies are its comments of kind bluesky); null: none */
  blueskyUrl: string | null;
}

const node = (comment: CommentWithAuthor): ThreadNode => ({ comment, replies: [], repliesEnd: null });

/** A page's end as the GraphQL connection's pageInfo has it (src/graphql/page.ts). */
function endOf<T>(page: Page<T>): PageEnd {
  const last = page.items.at(-1);
  return { hasNextPage: page.nextCursor !== null, endCursor: page.nextCursor ?? (last ? page.cursorOf(last) : null) };
}

/**
 * The page at `cursor` (null: the first) in `sort`, or with `parentId` that comment's page of replies
 * at `cursor`, with replies level by level. Unknown discussion → 404; a parentId that is no visible
 * comment of the discussion → 404.
 */
export async function readThreadSnapshot(
  ctx: RequestContext,
  discussionId: string,
  args: { sort: CommentSort; cursor: string | null; parentId?: string | null },
): Promise<ThreadSnapshot> {
  const parentId = args.parentId ?? null;
  const [read, settings, parent, blueskyUrl] = await Promise.all([
    parentId
      ? listCommentsWithDiscussion(ctx, discussionId, { parentId, sort: "oldest", limit: REPLIES_PER_COMMENT, cursor: args.cursor })
      : listCommentsWithDiscussion(ctx, discussionId, { topLevel: true, sort: args.sort, limit: TOP_LEVEL_PER_PAGE, cursor: args.cursor }),
    getSettings(ctx),
    parentId ? getComment(ctx, parentId).catch(() => null) : null,
    blueskyPostOf(ctx, discussionId).then((post) => post?.url ?? null),
  ]);
  if (parentId && (!parent || parent.discussionId !== discussionId)) throw errors.notFound("Comment");
  const { page, discussion } = read;
  const listed = page.items.map(node);
  const top = parent ? [{ comment: parent, replies: listed, repliesEnd: endOf(page) }] : listed;
  let level = listed;
  let budget = REPLIES_PER_PAGE - (parent ? listed.length : 0);
  for (let depth = 0; level.length && budget > 0 && depth < REPLY_LEVELS; depth++) {
    // each comment with replies asks for at most what is left of the page's budget
    const asks: { parent: ThreadNode; limit: number }[] = [];
    for (const n of level) {
      if (n.comment.replyCount <= 0 || budget <= 0) continue;
      const limit = Math.min(REPLIES_PER_COMMENT, budget);
      budget -= Math.min(n.comment.replyCount, limit);
      asks.push({ parent: n, limit });
    }
    const pages = await listReplyPages(
      ctx,
      discussionId,
      asks.map((a) => ({ parentId: a.parent.comment.id, limit: a.limit })),
    );
    level = [];
    asks.forEach(({ parent: n }, i) => {
      const replies = pages[i]!;
      n.replies = replies.items.map(node);
      n.repliesEnd = endOf(replies);
      level.push(...n.replies);
    });
  }
  const topEnd = parent ? top[0]!.repliesEnd! : endOf(page);
  return { discussion, settings, sort: args.sort, cursor: args.cursor, parentId, top, topEnd, blueskyUrl };
}
