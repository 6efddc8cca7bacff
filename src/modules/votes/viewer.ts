// The asserting reader's own vote on comments (Comment.myVote): one query per request for every
// comment the request resolves (a page of 20 comments costs one statement, not 20), and none for the
// reader's own comments (nobody votes on their own: a post's or an edit's answer reads nothing more).
import { currentReader, tenantIdOf, type RequestContext, db } from "../../context/request.js";
import { requestBatch } from "../../context/request-batch.js";

const votesOf = requestBatch(async (ctx, commentIds) => {
  const reader = await currentReader(ctx); // the one the callers saw (one per request)
  if (!reader) return new Map<string, number>();
  const rows = await db(ctx).vote.findMany({
    where: { tenantId: tenantIdOf(ctx), readerId: reader.id, commentId: { in: commentIds } },
    select: { commentId: true, value: true },
  });
  return new Map(rows.map((r) => [r.commentId, r.value]));
});

/**
 * Whether the request asserts a reader (X-Service-Identity): without one every myVote is null, known
 * without waiting (a page's answers are then made without a promise each).
 */
export const assertsReader = (ctx: RequestContext): boolean => ctx.identityToken !== null;

/** The reader's vote on the comment (1, -1, or 0 for none); null without an identity assertion. */
export async function myVote(ctx: RequestContext, comment: { id: string; author: { id: string } }): Promise<number | null> {
  const reader = await currentReader(ctx);
  if (!reader) return null;
  if (reader.id === comment.author.id) return 0;
  return (await votesOf(ctx, comment.id)).get(comment.id) ?? 0;
}
