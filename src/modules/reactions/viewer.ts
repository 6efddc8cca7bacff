// The asserting reader's own reactions on comments (Comment.viewerReactions): one query per request
// for every comment the request resolves (a page of 20 comments costs one statement, not 20).
import { currentReader, tenantIdOf, type RequestContext, db } from "../../context/request.js";

interface Batch {
  ids: Set<string>;
  result: Promise<Map<string, string[]>>;
}

const batches = new WeakMap<RequestContext, Batch>();

export async function viewerReactions(ctx: RequestContext, commentId: string): Promise<string[]> {
  let batch = batches.get(ctx);
  if (!batch) {
    const ids = new Set<string>();
    const created: Batch = {
      ids,
      // every resolver of this execution step adds its id before the batch runs
      result: new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batches.delete(ctx);
        const reader = await currentReader(ctx);
        const out = new Map<string, string[]>();
        if (!reader) return out;
        const rows = await db(ctx).reaction.findMany({
          where: { tenantId: tenantIdOf(ctx), readerId: reader.id, commentId: { in: [...ids] } },
          select: { commentId: true, kind: true },
          orderBy: { kind: "asc" },
        });
        for (const r of rows) out.set(r.commentId, [...(out.get(r.commentId) ?? []), r.kind]);
        return out;
      }),
    };
    batches.set(ctx, created);
    batch = created;
  }
  batch.ids.add(commentId);
  return (await batch.result).get(commentId) ?? [];
}
