// Who may see a comment: approved ones and tombstones of once-published ones to everybody;
// pending, rejected and never-published deleted ones to moderators and to their author.
import { currentReader, type RequestContext } from "../../context/request.js";
import type { Comment } from "../../generated/prisma/client.js";
import { hasCapability } from "../../auth/principal.js";
import type { Audience } from "../../events/types.js";

/**
 * Whether the caller may see pending/rejected content. This is a visibility rule on data (what a
 * read returns, who may delete), not an authorization gate: operations that *require*
 * moderate_content declare it with `authScopes` in src/modules/comments/graphql.ts.
 */
export function canModerate(ctx: RequestContext): boolean {
  return hasCapability(ctx.principal, "moderate_content");
}

/**
 * Why a safety rule or a moderator decided the comment's status, as the caller is shown it: to
 * moderate_content, null when nothing did; to anyone else always null (an author is not told why).
 */
export function shownModerationReason(ctx: RequestContext, c: Pick<Comment, "moderationReason">): Comment["moderationReason"] {
  return canModerate(ctx) ? (c.moderationReason ?? null) : null;
}

/** Visible to readers: counted in Discussion.commentCount / parent.replyCount. */
export const isVisible = (c: Pick<Comment, "status">): boolean => c.status === "approved";

/**
 * Whether the caller may see this comment at all: approved ones and tombstones of once-published
 * ones to everybody; pending, rejected and never-published deleted ones to moderators and to
 * their author (identity assertion).
 */
export async function visibleTo(ctx: RequestContext, c: Pick<Comment, "status" | "publishedAt" | "authorId">): Promise<boolean> {
  if (c.status === "approved") return true;
  if (c.status === "deleted" && c.publishedAt) return true;
  if (canModerate(ctx)) return true;
  const reader = ctx.identityToken ? await currentReader(ctx) : null;
  return !!reader && reader.id === c.authorId;
}

/** Audience of an event about this comment (src/events/types.ts). */
export const audienceOf = (c: Pick<Comment, "status">): Audience => (isVisible(c) ? "all" : "moderators");

/**
 * A shadow ban's comment (contract section 21): stored rejected with reason shadow_ban, and shown
 * as published to its author, the only reader who may see it (eng_post_comment; read.ts).
 */
export function isShadowBanned(c: Pick<Comment, "status" | "moderationReason">): boolean {
  const reason = c.moderationReason;
  return (
    c.status === "rejected" &&
    !!reason &&
    typeof reason === "object" &&
    !Array.isArray(reason) &&
    (reason as { source?: unknown }).source === "shadow_ban"
  );
}
