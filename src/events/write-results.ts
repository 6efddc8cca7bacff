// What the write functions answer, declared once: each function's `row` (what `runWrite` returns,
// src/events/statement.ts), the events they append, and what each event type carries as `data`. The
// types the modules use are these schemas' types. test/write-results.test.ts runs every write
// function against the database and parses its whole result with them (strict objects: a member a
// function adds, drops or renames fails it). Nothing parses them on the write path itself.
import { z } from "zod";
import { CommentKind, CommentStatus, DiscussionState, ReportReason, ReportStatus } from "../generated/prisma/enums.js";
import type { DbFunctionName, DbFunctions } from "../generated/db-functions.js";
import { STREAM_EVENT_TYPES, type EventType } from "./types.js";

const id = z.string().min(1);
const count = z.number().int().nonnegative();
/** A time as eng_iso prints it. */
const time = z.iso.datetime();
const reactionCounts = z.record(z.string(), z.number().int().positive());

/** A comment's author as every API shows it. */
export const authorJson = z.strictObject({
  id: z.string(),
  name: z.string(),
  avatarUrl: z.string().nullable(),
  badge: z.string().nullable(),
});

/**
 * A comment as the REST API answers it and as events carry it (`data.comment`), built by
 * eng_comment_json (prisma/sql/20-comments.sql); the REST fragment selects the same members in the
 * same order (src/modules/comments/operations.graphql).
 */
export const commentJson = z.strictObject({
  id,
  discussionId: id,
  parentId: z.string().nullable(),
  author: authorJson,
  body: z.string(),
  bodyHtml: z.string(),
  status: z.enum(CommentStatus),
  pinned: z.boolean(),
  editedAt: time.nullable(),
  createdAt: time,
  reactions: reactionCounts,
  replyCount: count,
  score: z.number().int(),
  upvotes: count,
  downvotes: count,
  /** comment, or mention (a webmention: contract section 24) */
  kind: z.enum(CommentKind),
});
export type CommentJson = z.infer<typeof commentJson>;

/** A comment's row with its author, what the comment writes answer (eng_comment_row_by; a post answers postedCommentRow, below): times as ISO strings. */
export const writtenCommentRow = z.strictObject({
  id,
  tenantId: id,
  discussionId: id,
  parentId: z.string().nullable(),
  depth: count,
  authorId: z.string(),
  authorName: z.string().nullable(),
  body: z.string(),
  bodyHtml: z.string(),
  status: z.enum(CommentStatus),
  kind: z.enum(CommentKind),
  pinned: z.boolean(),
  editedAt: time.nullable(),
  deletedAt: time.nullable(),
  createdAt: time,
  reactionCounts,
  reactionTotal: count,
  replyCount: count,
  publishedAt: time.nullable(),
  moderationReason: z.json().nullable(),
  upvotes: count,
  downvotes: count,
  score: z.number().int(),
  voteBest: z.number().min(0).max(1),
  author: z.strictObject({
    tenantId: id,
    id: z.string(),
    name: z.string(),
    avatarUrl: z.string().nullable(),
    badge: z.string().nullable(),
  }),
});
export type WrittenCommentRow = z.infer<typeof writtenCommentRow>;

/**
 * What eng_post_comment answers as its row: the comment as its event carries it, and the three members
 * a comment's row has beyond that JSON (a new comment's other members are its defaults). Made into
 * the row's shape by commentFromPosted (src/modules/comments/dto.ts), not built a second time in SQL.
 */
export const postedCommentRow = z.strictObject({
  comment: commentJson,
  depth: count,
  publishedAt: time.nullable(),
  moderationReason: z.json().nullable(),
});
export type PostedCommentRow = z.infer<typeof postedCommentRow>;

/** A reaction toggled (eng_toggle_reaction): its row and its event's `data.reaction`. */
export const reactionToggle = z.strictObject({ commentId: id, readerId: id, kind: id, active: z.boolean(), counts: reactionCounts });
export type ReactionToggle = z.infer<typeof reactionToggle>;

/** A page reaction toggled (eng_toggle_discussion_reaction): its row and its event's `data.reaction` (contract section 18). */
export const discussionReactionToggle = z.strictObject({
  discussionId: id,
  commentId: z.null(),
  readerId: id,
  kind: id,
  active: z.boolean(),
  counts: reactionCounts,
});
export type DiscussionReactionToggle = z.infer<typeof discussionReactionToggle>;

/** A vote (eng_vote, contract section 18): its row and its reaction_toggled event's `data.reaction`. */
export const voteJson = z.strictObject({
  commentId: id,
  readerId: id,
  kind: z.literal("vote"),
  value: z.union([z.literal(1), z.literal(-1), z.literal(0)]),
  score: z.number().int(),
  upvotes: count,
  downvotes: count,
});
export type VoteResult = z.infer<typeof voteJson>;

/** A discussion as its state change answers it and its events carry it (eng_discussion_json). */
export const discussionJson = z.strictObject({
  id,
  title: z.string().nullable(),
  url: z.string().nullable(),
  state: z.enum(DiscussionState),
  commentCount: count,
  counts: z.strictObject({ comments: count }),
  reactions: reactionCounts,
  createdAt: time,
  updatedAt: time,
});
export type DiscussionJson = z.infer<typeof discussionJson>;

/** One reader's report as the API shows it (eng_report_json). */
export const reportJson = z.strictObject({
  id,
  commentId: id,
  reason: z.enum(ReportReason),
  note: z.string().nullable(),
  status: z.enum(ReportStatus),
  createdAt: time,
});
export type CommentReport = z.infer<typeof reportJson>;

/** A sanction as the API shows it (eng_sanction_json): `until` null for a ban until lifted. */
export const sanctionJson = z.strictObject({ until: time.nullable(), reason: z.string().nullable(), shadow: z.boolean(), createdAt: time });
export type Sanction = z.infer<typeof sanctionJson>;

/** The functions `runWrite` calls: each answers `{ row, events }`, and this is its row. */
export const WRITE_ROWS = {
  eng_post_comment: postedCommentRow,
  eng_post_remote_comment: postedCommentRow,
  eng_edit_comment: writtenCommentRow,
  eng_delete_comment: writtenCommentRow,
  eng_set_comment_status: writtenCommentRow,
  eng_set_comment_pinned: writtenCommentRow,
  eng_decide_by_alert_link: z.strictObject({ spent: z.boolean(), acted: z.boolean(), comment: writtenCommentRow }),
  eng_toggle_reaction: reactionToggle,
  eng_toggle_remote_reaction: reactionToggle,
  eng_toggle_discussion_reaction: discussionReactionToggle,
  eng_vote: voteJson,
  eng_set_discussion_state: discussionJson,
  eng_auto_lock_discussions: z.strictObject({ locked: count }),
  eng_report_comment: z.strictObject({ report: reportJson, created: z.boolean() }),
  eng_ban_reader: z.strictObject({ sanction: sanctionJson, rejected: count }),
  eng_accept_mention: writtenCommentRow,
  /** null: the webmention had no comment to delete */
  eng_remove_mention: writtenCommentRow.nullable(),
  eng_erase_reader_batch: z.strictObject({
    anonymized: count,
    removed: count,
    tombstones: count,
    reactions: count,
    votes: count,
    eventsScrubbed: count,
    done: z.boolean(),
  }),
} satisfies { [F in JsonFunction]?: z.ZodType };

/**
 * The generated signatures' functions that answer json, or JSON as text (a write that builds its
 * answer without json: eng_post_comment): the only ones a row can be declared for.
 */
type JsonFunction = { [F in DbFunctionName]: DbFunctions[F]["result"] extends "json" | "text" ? F : never }[DbFunctionName];

export type WriteFunction = keyof typeof WRITE_ROWS;
export type WriteRow<F extends WriteFunction> = z.infer<(typeof WRITE_ROWS)[F]>;

/** A reply notification, on the parent author's own stream (eng_reply_notification). */
export const notificationJson = z.strictObject({ readerId: z.string(), commentId: id, parentId: id, discussionId: id });

const withComment = z.strictObject({ comment: commentJson });
const withDiscussion = z.strictObject({ discussion: discussionJson });

/** What each event type carries as its envelope's `data`. */
export const EVENT_DATA = {
  comment_created: withComment,
  comment_edited: withComment,
  comment_deleted: withComment,
  comment_approved: withComment,
  comment_rejected: withComment,
  comment_pinned: withComment,
  comment_unpinned: withComment,
  // on a comment, a vote on one, or on the discussion itself (a page reaction: commentId null)
  reaction_toggled: z.strictObject({ reaction: z.union([reactionToggle, voteJson, discussionReactionToggle]) }),
  discussion_locked: withDiscussion,
  discussion_unlocked: withDiscussion,
  discussion_archived: withDiscussion,
  notification_reply: z.strictObject({ notification: notificationJson }),
} satisfies Record<EventType, z.ZodType>;

/** An event as eng_log_event answers it (eng_insert_event, as json): the envelope, who may see it, and the webhook jobs queued. */
export const appendedEvent = z.strictObject({
  envelope: z.strictObject({
    id: z.uuid(),
    seq: z.number().int().positive(),
    type: z.enum(STREAM_EVENT_TYPES),
    tenantId: id,
    discussionId: id,
    occurredAt: time,
    data: z.record(z.string(), z.unknown()),
  }),
  audience: z.enum(["all", "moderators", "reader"]),
  readerId: z.string().nullable(),
  jobs: count,
});
export type AppendedEvent = z.infer<typeof appendedEvent>;

/** A write function's whole answer. */
export type WriteResult<F extends WriteFunction> = { row: WriteRow<F>; events: AppendedEvent[] };
export function writeResult<F extends WriteFunction>(fn: F): z.ZodType<WriteResult<F>> {
  // WRITE_ROWS[fn] is that schema; TypeScript does not follow an index by a type parameter into z.infer
  const row = WRITE_ROWS[fn] as unknown as z.ZodType<WriteRow<F>>;
  return z.strictObject({ row, events: z.array(appendedEvent) });
}
