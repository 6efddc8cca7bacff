// The asserting reader's own vote on comments (Comment.myVote): one query per request for every
// comment the request resolves (a page of 20 comments costs one statement, not 20), and none for the
// reader's own comments (nobody votes on their own: a post's or an edit's answer reads nothing more).
import { currentReader, tenantIdOf, type RequestContext, db } from "../../context/request.js";

interface Batch {
  ids: Set<string>;
  result: Promise<Map<string, number>>;
}

const batches = new WeakMap<RequestContext, Batch>();

/** The reader's vote on the comment (1, -1, or 0 for none); null without an identity assertion. */
export async function myVote(ctx: RequestContext, comment: { id: string; author: { id: string } }): Promise<number | null> {
  const reader = await currentReader(ctx);
  if (!reader) return null;
  if (reader.id === comment.author.id) return 0;
  let batch = batches.get(ctx);
  if (!batch) {
    const ids = new Set<string>();
    const created: Batch = {
      ids,
      // every resolver of this execution step adds its id before the batch runs
      result: new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batches.delete(ctx);
        const rows = await db(ctx).vote.findMany({
          where: { tenantId: tenantIdOf(ctx), readerId: reader.id, commentId: { in: [...ids] } },
          select: { commentId: true, value: true },
        });
        return new Map(rows.map((r) => [r.commentId, r.value]));
      }),
    };
    batches.set(ctx, created);
    batch = created;
  }
  batch.ids.add(comment.id);
  return (await batch.result).get(comment.id) ?? 0;
}
