// The one serializer of a comment: what the REST API returns and what comment events carry as
// `data.comment`. The GraphQL Comment type (src/modules/comments/graphql.ts) exposes the same fields from the
// same row, and the REST fragment (src/modules/comments/operations.graphql) selects them in this order,
// so an event's data.comment and the REST response are the same JSON (checked by a test).
import type { Comment, Reader } from "../../generated/prisma/client.js";

/** A comment's author as every API shows it (the reader row's own timestamps are not read). */
export type Author = Pick<Reader, "tenantId" | "id" | "name" | "avatarUrl">;

export type CommentWithAuthor = Comment & { author: Author };

/** The include that turns a Comment row into a CommentWithAuthor. */
export const WITH_AUTHOR = { author: true } as const;

export type ReactionCounts = Record<string, number>;

/** The stored reaction counts, as a clean `{kind: n}` map of positive integers. */
export function reactionCountsOf(c: Pick<Comment, "reactionCounts">): ReactionCounts {
  const raw = c.reactionCounts;
  const out: ReactionCounts = {};
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    for (const [kind, n] of Object.entries(raw)) {
      if (typeof n === "number" && Number.isInteger(n) && n > 0) out[kind] = n;
    }
  }
  return out;
}

export function authorDto(r: Author) {
  return { id: r.id, name: r.name, avatarUrl: r.avatarUrl };
}

export function commentDto(c: CommentWithAuthor) {
  return {
    id: c.id,
    discussionId: c.discussionId,
    parentId: c.parentId,
    author: authorDto(c.author),
    body: c.body,
    status: c.status,
    pinned: c.pinned,
    editedAt: c.editedAt ? c.editedAt.toISOString() : null,
    createdAt: c.createdAt.toISOString(),
    reactions: reactionCountsOf(c),
    replyCount: c.replyCount,
  };
}

export type CommentDto = ReturnType<typeof commentDto>;

/**
 * A comment as an event carries it (the REST shape) back into the row shape the GraphQL type reads.
 * Events do not carry `depth` (not a REST field): it is null there.
 */
export function commentFromDto(d: CommentDto): CommentWithAuthor {
  return {
    id: d.id,
    discussionId: d.discussionId,
    parentId: d.parentId,
    author: { ...d.author },
    body: d.body,
    status: d.status,
    pinned: d.pinned,
    editedAt: d.editedAt ? new Date(d.editedAt) : null,
    createdAt: new Date(d.createdAt),
    reactionCounts: d.reactions,
    replyCount: d.replyCount,
  } as unknown as CommentWithAuthor;
}

/** A comment with its author as the write functions return it (eng_comment_row): dates as ISO strings. */
export type CommentRow = Omit<CommentWithAuthor, "editedAt" | "deletedAt" | "createdAt" | "publishedAt" | "author"> & {
  editedAt: string | null;
  deletedAt: string | null;
  createdAt: string;
  publishedAt: string | null;
  author: Author;
};

const dateOrNull = (s: string | null) => (s === null ? null : new Date(s));

export function commentFromRow(r: CommentRow): CommentWithAuthor {
  return {
    ...r,
    editedAt: dateOrNull(r.editedAt),
    deletedAt: dateOrNull(r.deletedAt),
    createdAt: new Date(r.createdAt),
    publishedAt: dateOrNull(r.publishedAt),
    author: r.author,
  };
}
