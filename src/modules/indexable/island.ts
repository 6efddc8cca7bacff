// What the thread element needs to take the server-rendered thread over without reading it again
// (contract section 23): the first page as its GraphQL query answers it (embed/src/thread/api.ts,
// EmbedThread: the discussion's state, count, seq and page reactions, the top-level comments as a Relay
// page each with its replies), the reader settings (EmbedBasics' readerSettings, for a reader with no
// identity) and the discussion's event seq, after which its stream resumes. Comments are the JSON
// every API and event carries, as a caller that cannot moderate is shown it (`shownComment`), with a reader's own fields as they are without an
// identity (no reactions of theirs, no vote), without the Markdown source and without bodyHtml: each
// body is in the HTML beside the island once (its article's e-content, markup.ts), where the element
// reads it (embed/src/thread/island.ts). Replies nest as `replies` pages at every level, their cursors
// those of the same lists the element reads further pages from.
import { tenantIdOf, type RequestContext } from "../../context/request.js";
import type { CommentJson } from "../../events/write-results.js";
import { reactionCountsOf, shownComment } from "../comments/dto.js";
import { signInPageUrl } from "../sign-in/settings.js";
import type { ThreadNode, ThreadSnapshot } from "./snapshot.js";

interface RelayPage<T> {
  edges: { node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

type IslandComment = Omit<CommentJson, "bodyHtml"> & {
  viewerReactions: string[];
  myVote: null;
  replies?: RelayPage<IslandComment>;
};

export interface ThreadIsland {
  discussionId: string;
  sort: string;
  seq: number;
  thread: {
    discussion: {
      state: string;
      commentCount: number;
      seq: number;
      reactions: Record<string, number>;
      myReactions: null;
      bluesky: { url: string | null } | null;
    };
    comments: RelayPage<IslandComment>;
  };
  readerSettings: {
    reactionKinds: string[];
    pageReactionKinds: string[];
    editWindowSeconds: number;
    maxBodyLength: number;
    votes: string;
    signInUrl: string | null;
  };
}

function islandComment(n: ThreadNode): IslandComment {
  // the source is left out (the element shows bodyHtml; a reader's own comment, the only one it edits, comes from a load with their identity),
  // and bodyHtml is the article's beside the island
  // a tombstone's author is nobody's (shownComment): the element shows no name for it, and the bytes carry none
  const { bodyHtml: _, ...json } = shownComment(n.comment, false);
  const own = { ...json, body: "", viewerReactions: [], myVote: null };
  if (!n.repliesEnd) return own;
  return { ...own, replies: { edges: n.replies.map((r) => ({ node: islandComment(r) })), pageInfo: n.repliesEnd } };
}

export function threadIsland(ctx: RequestContext, s: ThreadSnapshot): ThreadIsland {
  const { discussion: d, settings } = s;
  return {
    discussionId: d.id,
    sort: s.sort,
    seq: d.seq,
    thread: {
      discussion: {
        state: d.state,
        commentCount: d.commentCount,
        seq: d.seq,
        reactions: reactionCountsOf(d),
        myReactions: null,
        bluesky: s.blueskyUrl ? { url: s.blueskyUrl } : null,
      },
      comments: {
        edges: s.top.map((n) => ({ node: islandComment(n) })),
        pageInfo: s.topEnd,
      },
    },
    readerSettings: {
      reactionKinds: settings.reactionKinds,
      pageReactionKinds: settings.pageReactionKinds,
      editWindowSeconds: settings.editWindowSeconds,
      maxBodyLength: settings.maxBodyLength,
      votes: settings.votes,
      signInUrl: settings.signIn.methods.length ? signInPageUrl(ctx.app.config.PUBLIC_URL, tenantIdOf(ctx)) : null,
    },
  };
}
