// A comment as a row (CommentWithAuthor: what the reads and writes give) and its public shape
// (`CommentJson`, declared in src/events/write-results.ts): what REST answers, events carry as
// data.comment, the embed fragment shows (its HTML, island and JSON-LD) and ActivityPub maps to a Note. The shape is made
// by eng_comment_json (prisma/sql/20-comments.sql) where a write's statement needs it (events, the
// post's answer, a Note's read) and by commentToJson, below, from a row already read; GraphQL's
// Comment type (src/modules/comments/graphql.ts) resolves those members from shownComment (the shape
// as the caller is shown it), and the REST fragment (src/modules/comments/operations.graphql) selects
// them in its order. test/write-results.test.ts holds commentToJson to eng_comment_json byte for byte,
// and a test compares an event's data.comment with the REST answer.
import type { Comment, Reader } from "../../generated/prisma/client.js";
import type { CommentJson, PostedCommentRow, WrittenCommentRow } from "../../events/write-results.js";
import { renderBody } from "../../lib/markdown.js";
import { DEFAULT_SETTINGS } from "../../tenancy/settings/tree.js";
import { isShadowBanned } from "./visibility.js";

/** A comment's author as every API shows it (the reader row's own timestamps are not read). */
export type Author = Pick<Reader, "tenantId" | "id" | "name" | "avatarUrl" | "badge">;

/**
 * (hasLinks is a column only search filters on, written with body_html: eng_has_links; revision is
 * what a chat alert's links compare with, read by their own statements: src/modules/alerts/engine/)
 */
export type CommentWithAuthor = Omit<Comment, "hasLinks" | "revision"> & { author: Author };

/**
 * A comment's stored rendering. A comment written before bodies were rendered has none until the
 * start-up backfill (src/modules/comments/engine/render-backfill.ts) reaches it: it is rendered now,
 * as the default formatting settings say.
 */
export function storedBodyHtml(c: Pick<Comment, "body" | "bodyHtml">): string {
  return c.bodyHtml ?? renderBody(c.body, DEFAULT_SETTINGS.formatting).html;
}

/**
 * The author a reader is shown for a comment: a deleted comment (a tombstone) names nobody — no id,
 * name, avatar or badge — in every public shape (the reader-facing API for a caller that cannot
 * moderate, the fragment's HTML, its island and its JSON-LD); moderators still see who wrote it.
 */
export function shownAuthor(c: Pick<CommentWithAuthor, "status" | "author">, moderator: boolean): Author {
  if (c.status !== "deleted" || moderator) return c.author;
  return { tenantId: c.author.tenantId, id: "", name: "", avatarUrl: null, badge: null };
}

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

/**
 * A comment as an event carries it (the REST shape) back into the row shape the GraphQL type reads.
 * Events do not carry `depth` (not a REST field): it is null there.
 */
export function commentFromJson(d: CommentJson): CommentWithAuthor {
  return {
    id: d.id,
    discussionId: d.discussionId,
    parentId: d.parentId,
    author: { ...d.author },
    body: d.body,
    bodyHtml: d.bodyHtml,
    status: d.status,
    pinned: d.pinned,
    editedAt: d.editedAt ? new Date(d.editedAt) : null,
    createdAt: new Date(d.createdAt),
    reactionCounts: d.reactions,
    replyCount: d.replyCount,
    score: d.score,
    upvotes: d.upvotes,
    downvotes: d.downvotes,
    kind: d.kind,
  } as unknown as CommentWithAuthor;
}

/** What a comment's public shape is made of (commentToJson reads these alone). */
export type CommentShapeSource = Pick<
  CommentWithAuthor,
  | "id"
  | "discussionId"
  | "parentId"
  | "body"
  | "bodyHtml"
  | "status"
  | "pinned"
  | "editedAt"
  | "createdAt"
  | "reactionCounts"
  | "replyCount"
  | "score"
  | "upvotes"
  | "downvotes"
  | "kind"
> & { author: Omit<Author, "tenantId"> };

/**
 * A comment as REST answers it and events carry it (the inverse of commentFromJson): for JSON built
 * outside SQL from a row already read (the reader's own stream, src/modules/inbox/engine/feed.ts),
 * member for member as eng_comment_json builds it. `status` and `author` as the caller is shown
 * them, when that is not the row's own (shownComment).
 */
export function commentToJson(
  c: CommentShapeSource,
  status: CommentJson["status"] = c.status,
  author: Omit<Author, "tenantId"> = c.author,
): CommentJson {
  return {
    id: c.id,
    discussionId: c.discussionId,
    parentId: c.parentId,
    author: { id: author.id, name: author.name, avatarUrl: author.avatarUrl, badge: author.badge },
    body: c.body,
    bodyHtml: storedBodyHtml(c),
    status,
    pinned: c.pinned,
    editedAt: c.editedAt === null ? null : c.editedAt.toISOString(),
    createdAt: c.createdAt.toISOString(),
    reactions: reactionCountsOf(c),
    replyCount: c.replyCount,
    score: c.score,
    upvotes: c.upvotes,
    downvotes: c.downvotes,
    kind: c.kind,
  };
}

/** What a post knows of its new comment before the write (the rest are a new comment's defaults). */
export interface NewComment {
  id: string;
  discussionId: string;
  parentId: string | null;
  author: CommentJson["author"];
  body: string;
  bodyHtml: string;
  status: CommentJson["status"];
  createdAt: Date;
  kind: CommentJson["kind"];
}

/**
 * A new comment's JSON text, made by commentToJson (the shape every read shows) from what the post
 * knows and a new comment's defaults, and handed to eng_post_comment (p_comment), which stores and
 * answers it as it is when the write decides what the request assumed (the status and the author's
 * badge); else the database builds it (eng_comment_json_by). test/post-text.test.ts holds the two to
 * one shape.
 */
export function newCommentText(c: NewComment): string {
  return JSON.stringify(
    commentToJson({
      ...c,
      pinned: false,
      editedAt: null,
      reactionCounts: {},
      replyCount: 0,
      score: 0,
      upvotes: 0,
      downvotes: 0,
    }),
  );
}

/**
 * What shownComment made for a row, kept on the row itself under a symbol (not enumerable: a spread or
 * JSON of the row never carries it): the shape for a caller that cannot moderate, and for one that can.
 * A WeakMap kept it before, whose entries cost every garbage collection (`npm run bench`, the lists).
 */
const SHOWN = Symbol("shown");
type Shown = { reader?: CommentJson; moderator?: CommentJson };
type ShownRow = CommentWithAuthor & { [SHOWN]?: Shown };

/**
 * The last answer of shownComment: GraphQL resolves a comment's fields one after another, each
 * reading its member of the shape, so a run of calls asks for the same row (a page of 20 comments
 * selected as REST's fragment is 260 calls, 240 of them the row just asked for).
 */
let lastRow: CommentWithAuthor | undefined;
let lastModerator = false;
let lastJson: CommentJson | undefined;

/**
 * A comment's public shape as a caller is shown it: a tombstone names nobody (shownAuthor) and a
 * shadow ban's comment reads as approved, but to moderators. What GraphQL's Comment fields (and so
 * REST's fragment) and the embed fragment (src/modules/indexable: markup, island, JSON-LD) read; made
 * once per row and kind of caller.
 */
export function shownComment(c: CommentWithAuthor, moderator: boolean): CommentJson {
  if (lastRow === c && lastModerator === moderator && lastJson !== undefined) return lastJson;
  const row = c as ShownRow;
  let made = row[SHOWN];
  if (!made) {
    made = {};
    if (Object.isExtensible(row)) Object.defineProperty(row, SHOWN, { value: made, enumerable: false });
  }
  const key = moderator ? "moderator" : "reader";
  let json = made[key];
  if (!json) made[key] = json = shapeShown(c, moderator);
  lastRow = c;
  lastModerator = moderator;
  lastJson = json;
  return json;
}

/**
 * shownComment made anew, not kept: for a row shown once (REST's page of comments,
 * src/modules/comment-answers), where keeping it cost more than making it.
 */
export function shapeShown(c: CommentWithAuthor, moderator: boolean): CommentJson {
  return commentToJson(c, isShadowBanned(c) && !moderator ? "approved" : c.status, shownAuthor(c, moderator));
}

const dateOrNull = (s: string | null) => (s === null ? null : new Date(s));

/** A write's row as the GraphQL type reads it (times as Dates). */
export function commentFromRow(r: WrittenCommentRow): CommentWithAuthor {
  return {
    ...r,
    editedAt: dateOrNull(r.editedAt),
    deletedAt: dateOrNull(r.deletedAt),
    createdAt: new Date(r.createdAt),
    publishedAt: dateOrNull(r.publishedAt),
    author: r.author,
  };
}

/**
 * What eng_post_comment answers (its event's comment and three members more) as the row of a new
 * comment: the comment as commentFromJson reads it, with the members the JSON leaves out set to a
 * new comment's defaults (no deletion, no import's author name, the Wilson bound of no votes).
 * test/write-results.test.ts checks it against the row eng_comment_row reads back. A result an
 * Idempotency-Key recorded before the answer took this shape is a whole row, read as one.
 */
export function commentFromPosted(tenantId: string, posted: PostedCommentRow | WrittenCommentRow): CommentWithAuthor {
  if (!("comment" in posted)) return commentFromRow(posted);
  const c = commentFromJson(posted.comment);
  let reactionTotal = 0;
  for (const n of Object.values(posted.comment.reactions)) reactionTotal += n;
  return {
    ...c,
    tenantId,
    depth: posted.depth,
    authorId: c.author.id,
    authorName: null,
    deletedAt: null,
    reactionTotal,
    publishedAt: dateOrNull(posted.publishedAt),
    moderationReason: posted.moderationReason,
    voteBest: 0,
    author: { ...c.author, tenantId },
  };
}
