// Comments: posting (threaded), editing within the edit window, soft deletion. Reads are in
// read.ts; moderation and reactions are modules of their own. Each write is one statement calling
// its database function (eng_post_comment, eng_edit_comment, eng_delete_comment in
// prisma/sql/20-comments.sql): the rules that need the rows under the discussion lock
// (parent, author, window, archived/locked) run there; input rules run here. What decides a new or
// edited comment's status is screening (screening.ts): one ordered list of steps, the first ones run
// here before the write, the last ones (trust, a shadow ban, the new-reader hold) decided by the
// function from what screening hands it. The body is rendered here, once (src/lib/markdown.ts, the
// tenant's formatting settings): the rules read the rendering, the hook gets both, and the function
// stores the HTML beside the source (comments.body_html).
import { z } from "zod";
import { loadTenant, requireReader, store, type RequestContext } from "../../context/request.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { checkDiscussionId, newId } from "../../lib/ids.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { commentFromPosted, commentFromRow, newCommentText, type CommentWithAuthor } from "./dto.js";
import { envelopeMembers } from "../../events/stored-envelope.js";
import type { CommentStatus } from "../../generated/prisma/enums.js";
import { canModerate } from "./visibility.js";
import { discussionForPage, type PageOfDiscussion } from "../discussions/discussions.js";
import { recordAudit } from "../audit/audit.js";
import { editHandOver, postHandOver, screenComment } from "./screening.js";
import { renderBody } from "../../lib/markdown.js";

/** Body rules: 1..max characters (code points), not blank, no NUL (PostgreSQL text refuses it). */
const bodySchema = (max: number) =>
  z
    .string({ error: (i) => (i.input === undefined || i.input === null ? "is required" : "must be a string") })
    .refine((s) => s.trim().length > 0, "must not be empty")
    .refine((s) => [...s].length <= max, `must be at most ${max} characters`)
    .refine((s) => !s.includes("\u0000"), "must not contain NUL characters");

export interface PostCommentInput {
  body?: string | null | undefined;
  parentId?: string | null | undefined;
  /** the page's URL and title, for a discussion its first comment creates (a browser's; settings discussions.autoCreate) */
  discussion?: PageOfDiscussion | null | undefined;
}

export interface EditCommentInput {
  body?: string | null | undefined;
}

/** The input schemas per maxBodyLength (a tenant setting): built once, not per request. */
const postSchemas = new Map<number, z.ZodType<{ body: string; parentId?: string | null | undefined }>>();
const editSchemas = new Map<number, z.ZodType<{ body: string }>>();

function postSchema(max: number) {
  let schema = postSchemas.get(max);
  if (!schema) postSchemas.set(max, (schema = z.object({ body: bodySchema(max), parentId: z.string().min(1).max(64).nullish() })));
  return schema;
}

function editSchema(max: number) {
  let schema = editSchemas.get(max);
  if (!schema) editSchemas.set(max, (schema = z.object({ body: bodySchema(max) })));
  return schema;
}

/**
 * A body alone judged as a post's or an edit's is (the tenant's maxBodyLength; the same 422 and
 * messages): what a preview (src/modules/formatting/preview.ts) renders.
 */
export function checkBody(input: EditCommentInput, maxBodyLength: number): string {
  return parse(editSchema(maxBodyLength), input).body;
}

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  return parsed.data;
}

/**
 * Posts a comment as the asserted reader. An unknown discussion is created (through a publishable
 * key: as discussions.autoCreate allows, with `discussion`'s URL and title). `parentId` must name
 * an approved comment of the same discussion: an unknown, foreign, pending, rejected or deleted
 * parent is a 422 on `parentId` (it is a field of the body, not the resource of the URL, so 404
 * would wrongly say the discussion is missing).
 */
export async function postComment(
  ctx: RequestContext,
  discussionId: string,
  input: PostCommentInput,
  opts: {
    /** a remote comment's (the fediverse's: settings federation.remoteModeration) in place of settings `moderation` */
    moderation?: "pre" | "post";
    /** a remote reply's Note and its actor, kept in federation_objects by the comment's own statement (a Note held already: 409) */
    remote?: { objectId: string; actorId: string };
    /** a Bluesky reply (kind bluesky): its URI and the URI's sha256 kept in bluesky_replies by the comment's own statement (held already: 409), written when it was */
    bluesky?: { uri: string; uriHash: string; createdAt: Date };
  } = {},
): Promise<CommentWithAuthor> {
  checkDiscussionId(discussionId, "discussionId");
  const reader = await requireReader(ctx);
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  const data = parse(postSchema(settings.maxBodyLength), input);
  // a browser comments on the tenant's discussions, and creates one only as discussions.autoCreate allows
  if (ctx.principal?.kind === "publishable") await discussionForPage(ctx, discussionId, input.discussion, settings);
  const rendered = renderBody(data.body, settings.formatting);
  const id = newId("cmt");
  // a remote comment is pre-moderated as settings federation.remoteModeration says, in place of `moderation`
  const screening = opts.moderation ? { ...settings, moderation: opts.moderation } : settings;
  const screened = await screenComment(ctx, screening, {
    action: "post",
    commentId: id,
    discussionId,
    parentId: data.parentId ?? null,
    body: data.body,
    rendered,
    reader,
  });
  const writer = store(ctx);
  const at = ctx.app.clock.now();
  const handOver = postHandOver(screened, settings.safety.newReaderHold);
  const bluesky = opts.bluesky ?? null;
  const createdAt = bluesky ? bluesky.createdAt : null;
  const args = {
    discussion: discussionId,
    id,
    reader: reader.id,
    name: reader.name,
    avatar: reader.avatarUrl,
    badge: reader.badge ?? null,
    body: data.body,
    bodyHtml: rendered.html,
    parent: data.parentId ?? null,
    // the verdicts, and what the function decides from the reader's row (screening.ts, steps 5-7)
    ...handOver,
    at,
    kind: null,
    createdAt,
    // the comment's JSON and its event's members as the write will store and answer them, built here
    // (the database builds them only when it decides otherwise: eng_post_comment)
    comment: newCommentText({
      id,
      discussionId,
      parentId: data.parentId ?? null,
      author: { id: reader.id, name: reader.name, avatarUrl: reader.avatarUrl, badge: reader.badge ?? null },
      body: data.body,
      bodyHtml: rendered.html,
      status: handOver.status as CommentStatus,
      createdAt: createdAt ?? at,
      kind: bluesky ? "bluesky" : "comment",
    }),
    eventMembers: envelopeMembers("comment_created", writer.tenantId, discussionId, at),
    atText: JSON.stringify(at.toISOString()),
  };
  // a reply from another network and the row that ties it to its original: one statement (a function of its own)
  const remote = opts.remote
    ? { network: "fediverse", remoteId: opts.remote.objectId, remoteActor: opts.remote.actorId, remoteHash: null }
    : bluesky
      ? { network: "bluesky", remoteId: bluesky.uri, remoteActor: null, remoteHash: bluesky.uriHash }
      : null;
  const row = remote ? await writer.write("eng_post_remote_comment", { ...args, ...remote }) : await writer.write("eng_post_comment", args);
  return commentFromPosted(writer.tenantId, row);
}

/**
 * The author edits the body within the edit window (editWindowSeconds, 0 = no limit). The safety
 * rules judge the new body: a published comment they hold or reject leaves the readers' view (as a
 * moderator's rejection takes it out), and the edit is then told to moderators only. A deleted
 * comment cannot be edited: 404, as it no longer has content to edit (its tombstone is not a
 * comment of its author's any more).
 */
export async function editComment(ctx: RequestContext, id: string, input: EditCommentInput): Promise<CommentWithAuthor> {
  const reader = await requireReader(ctx);
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  const data = parse(editSchema(settings.maxBodyLength), input);
  const rendered = renderBody(data.body, settings.formatting);
  const screened = await screenComment(ctx, settings, { action: "edit", commentId: id, body: data.body, rendered, reader });
  const row = await store(ctx).write("eng_edit_comment", {
    id,
    reader: reader.id,
    moderator: canModerate(ctx),
    body: data.body,
    bodyHtml: rendered.html,
    windowSeconds: settings.editWindowSeconds,
    // the verdicts, and what the function decides from the reader's row and the comment (screening.ts)
    ...editHandOver(screened),
    at: ctx.app.clock.now(),
  });
  return commentFromRow(row);
}

/**
 * Soft delete by the author (identity) or a caller with moderate_content: status deleted, body
 * cleared, unpinned, counts adjusted. Deleting an already deleted comment is a no-op (no event).
 * Allowed in locked discussions (locking stops new content, not its removal), not in archived ones.
 */
export async function deleteComment(ctx: RequestContext, id: string): Promise<CommentWithAuthor> {
  const moderator = canModerate(ctx);
  const reader = moderator ? null : await requireReader(ctx);
  const row = await store(ctx).write("eng_delete_comment", {
    id,
    reader: reader?.id ?? null,
    moderator,
    at: ctx.app.clock.now(),
  });
  // a moderator's removal is an action to account for; an author deleting their own comment is not
  if (moderator) await recordAudit(ctx, "comment.delete", { type: "comment", id }, { discussionId: row.discussionId });
  return commentFromRow(row);
}
