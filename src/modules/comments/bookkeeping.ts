// The write-side bookkeeping of a comment, shared by comments, moderation and reactions: the locked
// read of a comment for a write, the reader upsert, the visible counts, and the events of a comment
// becoming visible for the first time.
import type { Comment, Discussion } from "../../generated/prisma/client.js";
import type { ReaderIdentity } from "../../auth/identity.js";
import { errors } from "../../lib/errors.js";
import type { EventSink, ScopedTx } from "../../events/write-tx.js";
import { lockDiscussionRow } from "../discussions/discussions.js";
import { commentDto, WITH_AUTHOR, type CommentWithAuthor } from "./dto.js";

/**
 * The comment and its discussion for a write: the discussion row is locked first (the one lock
 * order of CONVENTIONS), then the comment is read again under that lock. Unknown id → 404.
 */
export async function lockComment(
  tx: ScopedTx,
  tenantId: string,
  id: string,
): Promise<{ discussion: Discussion; comment: CommentWithAuthor }> {
  const found = await tx.comment.findUnique({ where: { id }, select: { discussionId: true } });
  if (!found) throw errors.notFound("Comment");
  const discussion = await lockDiscussionRow(tx, tenantId, found.discussionId);
  const comment = await tx.comment.findUnique({ where: { id }, include: WITH_AUTHOR });
  if (!discussion || !comment) throw errors.notFound("Comment");
  return { discussion, comment };
}

/** Inserts the reader on first sight; updates name/avatarUrl when the assertion changed them. */
export async function upsertReader(tx: ScopedTx, tenantId: string, r: ReaderIdentity): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO readers (tenant_id, id, name, avatar_url, updated_at)
    VALUES (${tenantId}, ${r.id}, ${r.name}, ${r.avatarUrl}, now())
    ON CONFLICT (tenant_id, id) DO UPDATE SET name = EXCLUDED.name, avatar_url = EXCLUDED.avatar_url, updated_at = now()
    WHERE readers.name IS DISTINCT FROM EXCLUDED.name OR readers.avatar_url IS DISTINCT FROM EXCLUDED.avatar_url`;
}

/**
 * Keeps Discussion.commentCount and the parent's replyCount (approved, not deleted) exact: called
 * with +1 / -1 on every transition into / out of visibility, under the discussion lock.
 */
export async function shiftVisibility(tx: ScopedTx, tenantId: string, c: Comment, delta: 1 | -1): Promise<void> {
  await tx.$executeRaw`
    UPDATE discussions SET comment_count = comment_count + ${delta}, updated_at = now()
     WHERE tenant_id = ${tenantId} AND id = ${c.discussionId}`;
  if (c.parentId) {
    await tx.$executeRaw`
      UPDATE comments SET reply_count = reply_count + ${delta} WHERE tenant_id = ${tenantId} AND id = ${c.parentId}`;
  }
}

/**
 * The events of a comment becoming visible for the first time: the public comment_created, and a
 * reply notification to the parent's author when that is someone else.
 */
export async function announce(tx: ScopedTx, events: EventSink, c: CommentWithAuthor): Promise<void> {
  await events.append({ discussionId: c.discussionId, type: "comment_created", data: { comment: commentDto(c) } });
  if (!c.parentId) return;
  const parent = await tx.comment.findUnique({ where: { id: c.parentId }, select: { authorId: true } });
  if (!parent || parent.authorId === c.authorId) return;
  await events.append({
    discussionId: c.discussionId,
    type: "notification_reply",
    audience: "reader",
    readerId: parent.authorId,
    data: {
      notification: { readerId: parent.authorId, commentId: c.id, parentId: c.parentId, discussionId: c.discussionId },
    },
  });
}
