// The shapes <engagement-thread> reads from the API and its live events: a comment, a page of them,
// a stream event and the reactions and votes it may carry. Declared once; store.ts re-exports them.

import type { CommentStatus, DiscussionState } from "../../../src/generated/prisma/enums.js";

export type { CommentStatus, DiscussionState };
export type Sort = "newest" | "oldest" | "top" | "best" | "score";

export interface Author {
  id: string;
  name: string;
  avatarUrl: string | null;
  /** a short label by the name (contract section 21), tenant text shown as is */
  badge?: string | null;
}

export interface Comment {
  id: string;
  parentId: string | null;
  author: Author;
  body: string;
  /** the service's sanitized rendering of `body` (contract section 18); shown instead of `body` when present */
  bodyHtml?: string;
  status: CommentStatus;
  /** comment, mention (a webmention) or bluesky (a reply on Bluesky: contract section 30); absent: comment */
  kind?: string;
  pinned: boolean;
  editedAt: string | null;
  createdAt: string;
  reactions: Record<string, number>;
  replyCount: number;
  /** votes (settings votes): upvotes − downvotes, and each */
  score: number;
  upvotes: number;
  downvotes: number;
  /** the viewer's own reactions (GraphQL's viewerReactions); events do not carry them */
  viewerReactions?: string[];
  /** the viewer's own vote, 1, -1 or 0 (GraphQL's myVote, null without an identity); events do not carry it */
  myVote?: number | null;
}

/** A reaction_toggled event's data.reaction: a reaction toggled, or a vote (kind "vote"). */
export type LiveReaction =
  | { commentId: string; readerId: string; kind: string; active: boolean; counts: Record<string, number> }
  | { commentId: string; readerId: string; kind: "vote"; value: number; score: number; upvotes: number; downvotes: number }
  | { commentId: null; discussionId?: string; readerId: string; kind: string; active: boolean; counts: Record<string, number> };

export interface Page<T> {
  edges: { node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** A comment with its replies read with it (a server-rendered thread's island nests them at every level). */
export type CommentWithReplies = Comment & { replies?: Page<CommentWithReplies> };

/** A stream event's type and data (the envelope's `data`, section 5). */
export interface LiveEvent {
  type: string;
  /** the event's seq in its discussion (its SSE id); absent on an event without one */
  seq?: number;
  data: {
    comment?: Comment;
    /** on a comment (a reaction or a vote), or (commentId null) on the discussion itself: a page reaction */
    reaction?: LiveReaction;
    discussion?: { state: DiscussionState; commentCount?: number; reactions?: Record<string, number> };
  };
}
