// Comments: posting (threaded), editing within the edit window, soft deletion. Reads are in
// read.ts; moderation and reactions are modules of their own.
import { z } from "zod";
import { loadTenant, requireReader, tenantIdOf, type RequestContext } from "../../context/request.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import { writeTx } from "../../events/write-tx.js";
import { resolveSettings } from "../../tenancy/settings-model.js";
import { assertNotArchived, assertWritable, createAndLockDiscussionRow } from "../discussions/discussions.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { commentDto, WITH_AUTHOR, type CommentWithAuthor } from "./dto.js";
import { announce, lockComment, shiftVisibility, upsertReader } from "./bookkeeping.js";
import { audienceOf, canModerate, isVisible, visibleTo } from "./visibility.js";

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
}

export interface EditCommentInput {
  body?: string | null | undefined;
}

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  return parsed.data;
}

/**
 * Posts a comment as the asserted reader. An unknown discussion is created. `parentId` must name
 * an approved comment of the same discussion: an unknown, foreign, pending, rejected or deleted
 * parent is a 422 on `parentId` (it is a field of the body, not the resource of the URL, so 404
 * would wrongly say the discussion is missing).
 */
export async function postComment(ctx: RequestContext, discussionId: string, input: PostCommentInput): Promise<CommentWithAuthor> {
  checkDiscussionId(discussionId, "discussionId");
  const reader = await requireReader(ctx);
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  const data = parse(
    z.object({ body: bodySchema(settings.maxBodyLength), parentId: z.string().min(1).max(64).nullish() }),
    input,
  );
  const tenantId = tenantIdOf(ctx);
  return writeTx(ctx.app, tenantId, async (tx, events) => {
    const discussion = await createAndLockDiscussionRow(tx, tenantId, discussionId);
    assertWritable(discussion);
    const parent = data.parentId ? await tx.comment.findUnique({ where: { id: data.parentId } }) : null;
    if (data.parentId && (!parent || parent.discussionId !== discussionId || !isVisible(parent))) {
      throw errors.validation([{ path: "parentId", message: "must be the id of a visible comment of this discussion" }]);
    }
    await upsertReader(tx, tenantId, reader);
    const now = ctx.app.clock.now();
    const status = settings.moderation === "pre" ? "pending" : "approved";
    const comment = await tx.comment.create({
      data: {
        id: newId("cmt"),
        tenantId,
        discussionId,
        parentId: parent?.id ?? null,
        depth: parent ? parent.depth + 1 : 0,
        authorId: reader.id,
        body: data.body,
        status,
        createdAt: now,
        publishedAt: status === "approved" ? now : null,
      },
      include: WITH_AUTHOR,
    });
    if (status === "approved") {
      await shiftVisibility(tx, tenantId, comment, 1);
      await announce(tx, events, comment);
    } else {
      // Not public until approved: only the author's own stream hears of it.
      await events.append({
        discussionId,
        type: "comment_created",
        audience: "reader",
        readerId: reader.id,
        data: { comment: commentDto(comment) },
      });
    }
    return comment;
  });
}

/**
 * The author edits the body within the edit window (editWindowSeconds, 0 = no limit). A deleted
 * comment cannot be edited: 404, as it no longer has content to edit (its tombstone is not a
 * comment of its author's any more).
 */
export async function editComment(ctx: RequestContext, id: string, input: EditCommentInput): Promise<CommentWithAuthor> {
  const reader = await requireReader(ctx);
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  const data = parse(z.object({ body: bodySchema(settings.maxBodyLength) }), input);
  const tenantId = tenantIdOf(ctx);
  return writeTx(ctx.app, tenantId, async (tx, events) => {
    const { discussion, comment } = await lockComment(tx, tenantId, id);
    if (comment.status === "deleted" || !(await visibleTo(ctx, comment))) throw errors.notFound("Comment");
    if (comment.authorId !== reader.id) throw errors.notAuthor("Only the comment's author may edit it.");
    assertWritable(discussion);
    const now = ctx.app.clock.now();
    const windowMs = settings.editWindowSeconds * 1000;
    if (windowMs > 0 && now.getTime() - comment.createdAt.getTime() > windowMs) {
      throw errors.conflict("edit_window_closed", `Comments can be edited for ${settings.editWindowSeconds} s after posting.`);
    }
    const updated = await tx.comment.update({ where: { id }, data: { body: data.body, editedAt: now }, include: WITH_AUTHOR });
    await events.append({
      discussionId: updated.discussionId,
      type: "comment_edited",
      audience: audienceOf(updated),
      data: { comment: commentDto(updated) },
    });
    return updated;
  });
}

/**
 * Soft delete by the author (identity) or a caller with moderate_content: status deleted, body
 * cleared, unpinned, counts adjusted. Deleting an already deleted comment is a no-op (no event).
 * Allowed in locked discussions (locking stops new content, not its removal), not in archived ones.
 */
export async function deleteComment(ctx: RequestContext, id: string): Promise<CommentWithAuthor> {
  const moderator = canModerate(ctx);
  const reader = moderator ? null : await requireReader(ctx);
  const tenantId = tenantIdOf(ctx);
  return writeTx(ctx.app, tenantId, async (tx, events) => {
    const { discussion, comment } = await lockComment(tx, tenantId, id);
    if (!(await visibleTo(ctx, comment))) throw errors.notFound("Comment");
    if (reader && comment.authorId !== reader.id) throw errors.notAuthor("Only the author or a moderator may delete this comment.");
    if (comment.status === "deleted") return comment;
    assertNotArchived(discussion);
    const wasVisible = isVisible(comment);
    const updated = await tx.comment.update({
      where: { id },
      data: { status: "deleted", body: "", pinned: false, deletedAt: ctx.app.clock.now() },
      include: WITH_AUTHOR,
    });
    if (wasVisible) await shiftVisibility(tx, tenantId, updated, -1);
    await events.append({
      discussionId: updated.discussionId,
      type: "comment_deleted",
      audience: wasVisible ? "all" : "moderators",
      data: { comment: commentDto(updated) },
    });
    return updated;
  });
}
