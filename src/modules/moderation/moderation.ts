// Moderation of comments: approve / reject / pin / unpin. The GraphQL fields require
// moderate_content (authScopes); here are the state rules. Idempotent: a call that changes nothing
// appends no event. Deleted comments cannot be moderated (404); archived discussions refuse (409).
import { tenantIdOf, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { writeTx } from "../../events/write-tx.js";
import { commentDto, WITH_AUTHOR, type CommentWithAuthor } from "../comments/dto.js";
import { announce, lockComment, shiftVisibility } from "../comments/bookkeeping.js";
import { audienceOf, isVisible } from "../comments/visibility.js";
import { assertNotArchived } from "../discussions/discussions.js";

/**
 * pending|rejected → approved makes the comment visible (counts, comment_approved to all) and, the
 * first time it ever becomes visible, comment_created to all plus the reply notification.
 * pending|approved → rejected hides it (counts) with comment_rejected to moderators only.
 */
export async function setCommentStatus(ctx: RequestContext, id: string, to: "approved" | "rejected"): Promise<CommentWithAuthor> {
  const tenantId = tenantIdOf(ctx);
  return writeTx(ctx.app, tenantId, async (tx, events) => {
    const { discussion, comment } = await lockComment(tx, tenantId, id);
    if (comment.status === "deleted") throw errors.notFound("Comment");
    assertNotArchived(discussion);
    if (comment.status === to) return comment;
    const firstPublish = to === "approved" && !comment.publishedAt;
    const updated = await tx.comment.update({
      where: { id },
      data: { status: to, ...(firstPublish ? { publishedAt: ctx.app.clock.now() } : {}) },
      include: WITH_AUTHOR,
    });
    const wasVisible = isVisible(comment);
    if (wasVisible !== isVisible(updated)) await shiftVisibility(tx, tenantId, updated, wasVisible ? -1 : 1);
    const data = { comment: commentDto(updated) };
    if (to === "approved") {
      await events.append({ discussionId: updated.discussionId, type: "comment_approved", data });
      if (firstPublish) await announce(tx, events, updated);
    } else {
      await events.append({ discussionId: updated.discussionId, type: "comment_rejected", audience: "moderators", data });
    }
    return updated;
  });
}

export async function setCommentPinned(ctx: RequestContext, id: string, pinned: boolean): Promise<CommentWithAuthor> {
  const tenantId = tenantIdOf(ctx);
  return writeTx(ctx.app, tenantId, async (tx, events) => {
    const { discussion, comment } = await lockComment(tx, tenantId, id);
    if (comment.status === "deleted") throw errors.notFound("Comment");
    assertNotArchived(discussion);
    if (comment.pinned === pinned) return comment;
    const updated = await tx.comment.update({ where: { id }, data: { pinned }, include: WITH_AUTHOR });
    await events.append({
      discussionId: updated.discussionId,
      type: pinned ? "comment_pinned" : "comment_unpinned",
      audience: audienceOf(updated),
      data: { comment: commentDto(updated) },
    });
    return updated;
  });
}
