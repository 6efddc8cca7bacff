// A server-rendered thread (contract section 23, src/modules/indexable/island.ts): the service's
// fragment puts the element's first page in its light DOM as a JSON data block,
// `<script type="application/json" data-engagement-thread>`, in the shapes the element's own queries
// answer (ThreadPage, ReaderSettings) with the discussion's event seq when it was read. The element
// shows it at once instead of asking for the page, and resumes its stream after that seq, so what
// was written since (the fragment may be minutes old in a cache) arrives as events. The island
// carries no bodyHtml: each body is in the HTML beside it once, its article's e-content
// (`<article id="comment-<id>"><div class="e-content">…`), read from there. Pure but for reading
// the element's children; anything that is not such a block for this discussion is ignored.
import type { ReaderSettings, ThreadPage } from "./api.js";
import type { Sort } from "./store.js";
import type { CommentWithReplies, Page } from "./types.js";

export interface ThreadIsland {
  discussionId: string;
  sort: Sort;
  /** the discussion's event seq when the page was read: the stream resumes after it */
  seq: number;
  thread: ThreadPage;
  readerSettings: ReaderSettings;
}

export const ISLAND_SELECTOR = "script[type='application/json'][data-engagement-thread]";

/** The element's island for `discussionId`, or null when it has none (or one for another discussion). */
export function readIsland(element: Element, discussionId: string | null): ThreadIsland | null {
  const block = element.querySelector(`:scope > ${ISLAND_SELECTOR}`);
  if (!block || !discussionId) return null;
  try {
    const island = JSON.parse(block.textContent ?? "") as Partial<ThreadIsland> | null;
    const ok =
      island?.discussionId === discussionId &&
      typeof island.seq === "number" &&
      typeof island.sort === "string" &&
      Array.isArray(island.thread?.comments?.edges) &&
      typeof island.readerSettings === "object" &&
      island.readerSettings !== null;
    if (!ok) return null;
    fillBodies(element, (island as ThreadIsland).thread.comments);
    return island as ThreadIsland;
  } catch {
    return null;
  }
}

const ARTICLE_ID = "comment-";

/** Each comment's bodyHtml the island leaves out, from its server-rendered article's e-content (the service's sanitized HTML, as the page parsed it). */
function fillBodies(element: Element, page: Page<CommentWithReplies>): void {
  const bodies = new Map<string, string>();
  for (const content of element.querySelectorAll(`:scope article[id^="${ARTICLE_ID}"] > .e-content`))
    bodies.set(content.parentElement!.id.slice(ARTICLE_ID.length), content.innerHTML);
  const fill = (p: Page<CommentWithReplies>): void => {
    for (const { node } of p.edges) {
      if (node.bodyHtml === undefined) {
        const body = bodies.get(node.id);
        if (body !== undefined) node.bodyHtml = body;
      }
      if (node.replies) fill(node.replies);
    }
  };
  fill(page);
}
