// The asserting reader's own reactions on comments (Comment.viewerReactions): one query per request
// for every comment the request resolves (a page of 20 comments costs one statement, not 20).
import { currentReader, tenantIdOf, type RequestContext, db } from "../../context/request.js";
import { requestBatch } from "../../context/request-batch.js";

const reactionsOf = requestBatch(async (ctx, commentIds) => {
  const reader = await currentReader(ctx);
  const out = new Map<string, string[]>();
  if (!reader) return out;
  const rows = await db(ctx).reaction.findMany({
    where: { tenantId: tenantIdOf(ctx), readerId: reader.id, commentId: { in: commentIds } },
    select: { commentId: true, kind: true },
    orderBy: { kind: "asc" },
  });
  for (const r of rows) out.set(r.commentId, [...(out.get(r.commentId) ?? []), r.kind]);
  return out;
});

export async function viewerReactions(ctx: RequestContext, commentId: string): Promise<string[]> {
  return (await reactionsOf(ctx, commentId)).get(commentId) ?? [];
}
