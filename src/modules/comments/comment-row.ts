// A comment with its author as the plain-SQL reads select it (every list, page and feed of
// comments): the columns, the row they give and the CommentWithAuthor made from it.
import type { CommentWithAuthor } from "./dto.js";

/** The columns of a comment with its author, as CommentWithAuthor (see rowToComment). */
export const COMMENT_COLUMNS = `c.id, c.tenant_id, c.discussion_id, c.parent_id, c.depth, c.author_id, c.body, c.body_html, c.status::text AS status, c.kind::text AS kind,
  c.pinned, c.edited_at, c.deleted_at, c.created_at, c.reaction_counts, c.reaction_total, c.reply_count, c.published_at,
  c.moderation_reason, c.upvotes, c.downvotes, c.score, c.vote_best, c.author_name AS own_author_name, COALESCE(c.author_name, r.name) AS author_name, r.avatar_url AS author_avatar_url, r.badge AS author_badge`;

export interface CommentSqlRow {
  id: string;
  tenant_id: string;
  discussion_id: string;
  parent_id: string | null;
  depth: number;
  author_id: string;
  body: string;
  body_html: string | null;
  status: CommentWithAuthor["status"];
  kind: CommentWithAuthor["kind"];
  pinned: boolean;
  edited_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  reaction_counts: CommentWithAuthor["reactionCounts"];
  reaction_total: number;
  reply_count: number;
  published_at: Date | null;
  moderation_reason: CommentWithAuthor["moderationReason"];
  upvotes: number;
  downvotes: number;
  score: number;
  vote_best: number;
  /** the comment's own author name (an import's), null for the reader's */
  own_author_name: string | null;
  /** the name shown: the comment's own, else the reader's */
  author_name: string;
  author_avatar_url: string | null;
  author_badge: string | null;
}

export function rowToComment(r: CommentSqlRow): CommentWithAuthor {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    discussionId: r.discussion_id,
    parentId: r.parent_id,
    depth: r.depth,
    authorId: r.author_id,
    authorName: r.own_author_name,
    body: r.body,
    bodyHtml: r.body_html,
    status: r.status,
    kind: r.kind,
    pinned: r.pinned,
    editedAt: r.edited_at,
    deletedAt: r.deleted_at,
    createdAt: r.created_at,
    reactionCounts: r.reaction_counts,
    reactionTotal: r.reaction_total,
    replyCount: r.reply_count,
    publishedAt: r.published_at,
    moderationReason: r.moderation_reason,
    upvotes: r.upvotes,
    downvotes: r.downvotes,
    score: r.score,
    voteBest: r.vote_best,
    author: {
      tenantId: r.tenant_id,
      id: r.author_id,
      name: r.author_name,
      avatarUrl: r.author_avatar_url,
      badge: r.author_badge,
    },
  };
}
