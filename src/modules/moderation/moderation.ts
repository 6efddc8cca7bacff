// Moderation of comments: approve / reject / pin / unpin. The GraphQL fields require
// moderate_content (authScopes); the state rules run in the database functions
// eng_set_comment_status and eng_set_comment_pinned (one statement each). Idempotent: a call that
// changes nothing appends no event. Deleted comments cannot be moderated (404); archived
// discussions refuse (409).
import { store, type RequestContext } from "../../context/request.js";
import type { WrittenCommentRow } from "../../events/write-results.js";
import { commentFromRow, type CommentWithAuthor } from "../comments/dto.js";
import { recordAudit } from "../audit/audit.js";

/**
 * pending|rejected → approved makes the comment visible (counts, comment_approved to all) and, the
 * first time it ever becomes visible, comment_created to all plus the reply notification.
 * pending|approved → rejected hides it (counts) with comment_rejected to moderators only.
 */
export async function setCommentStatus(ctx: RequestContext, id: string, to: "approved" | "rejected"): Promise<CommentWithAuthor> {
  // what Akismet is told of it (submit-ham / submit-spam) is queued by the same statement
  const row = await store(ctx).write("eng_set_comment_status", { id, to, at: ctx.app.clock.now() });
  await auditCommentStatus(ctx, row, to);
  return commentFromRow(row);
}

/** The audit entry of an approval or rejection (a chat alert's link records its own the same way). */
export async function auditCommentStatus(ctx: RequestContext, row: WrittenCommentRow, to: "approved" | "rejected"): Promise<void> {
  await recordAudit(
    ctx,
    to === "approved" ? "comment.approve" : "comment.reject",
    { type: "comment", id: row.id },
    { discussionId: row.discussionId },
  );
}

export async function setCommentPinned(ctx: RequestContext, id: string, pinned: boolean): Promise<CommentWithAuthor> {
  const row = await store(ctx).write("eng_set_comment_pinned", { id, pinned, at: ctx.app.clock.now() });
  await recordAudit(ctx, pinned ? "comment.pin" : "comment.unpin", { type: "comment", id }, { discussionId: row.discussionId });
  return commentFromRow(row);
}
