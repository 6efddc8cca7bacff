// What an indexable thread shows (contract section 23): a discussion's page of top-level comments
// in a sort, each with its replies nested, read through the same list the API reads
// (src/modules/comments/read.ts `listComments`: the caller's visibility, shadow bans, sort and
// cursors), so the fragment shows exactly what a reader without an identity sees through REST or
// GraphQL. The discussion row (and its event seq) is read before the comments: a stream resumed
// from that seq (the thread element's upgrade) misses nothing written after the read.
import type { RequestContext } from "../../context/request.js";
import type { Discussion } from "../../generated/prisma/client.js";
import type { Settings } from "../../tenancy/settings-model.js";
import type { CommentWithAuthor } from "../comments/dto.js";
import { listComments, type CommentSort } from "../comments/read.js";
import { getDiscussion } from "../discussions/discussions.js";
import { getSettings } from "../settings/settings.js";
import type { Page } from "../../lib/pagination.js";

/** Top-level comments per page: the thread element's first page. */
export const TOP_LEVEL_PER_PAGE = 20;
/** Replies read per comment (oldest first, as the thread element shows them). */
export const REPLIES_PER_COMMENT = 20;
/** Replies read per page, all levels together: past it, deeper replies are left to the live thread. */
export const REPLIES_PER_PAGE = 200;

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
  top: ThreadNode[];
  topEnd: PageEnd;
}

const node = (comment: CommentWithAuthor): ThreadNode => ({ comment, replies: [], repliesEnd: null });

/** A page's end as the GraphQL connection's pageInfo has it (src/graphql/page.ts). */
function endOf<T>(page: Page<T>): PageEnd {
  const last = page.items.at(-1);
  return { hasNextPage: page.nextCursor !== null, endCursor: page.nextCursor ?? (last ? page.cursorOf(last) : null) };
}

/** The page at `cursor` (null: the first) in `sort`, with replies level by level. Unknown discussion → 404. */
export async function readThreadSnapshot(
  ctx: RequestContext,
  discussionId: string,
  args: { sort: CommentSort; cursor: string | null },
): Promise<ThreadSnapshot> {
  const [discussion, settings] = await Promise.all([getDiscussion(ctx, discussionId), getSettings(ctx)]);
  const page = await listComments(ctx, discussionId, { topLevel: true, sort: args.sort, limit: TOP_LEVEL_PER_PAGE, cursor: args.cursor });
  const top = page.items.map(node);
  let level = top;
  let budget = REPLIES_PER_PAGE;
  while (level.length && budget > 0) {
    // each comment with replies asks for at most what is left of the page's budget
    const asks: { parent: ThreadNode; limit: number }[] = [];
    for (const parent of level) {
      if (parent.comment.replyCount <= 0 || budget <= 0) continue;
      const limit = Math.min(REPLIES_PER_COMMENT, budget);
      budget -= Math.min(parent.comment.replyCount, limit);
      asks.push({ parent, limit });
    }
    const pages = await Promise.all(
      asks.map(({ parent, limit }) => listComments(ctx, discussionId, { parentId: parent.comment.id, sort: "oldest", limit })),
    );
    level = [];
    asks.forEach(({ parent }, i) => {
      const replies = pages[i]!;
      parent.replies = replies.items.map(node);
      parent.repliesEnd = endOf(replies);
      level.push(...parent.replies);
    });
  }
  return { discussion, settings, sort: args.sort, cursor: args.cursor, top, topEnd: endOf(page) };
}
