// Reactions: a reader toggles one reaction of a kind on a comment. Exact under concurrency: the
// toggle runs under the discussion row lock (one writer per discussion at a time), the primary key
// (comment, reader, kind) allows one row, and the counts on the comment are updated in the same
// transaction.
import { z } from "zod";
import { loadTenant, requireReader, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { Prisma } from "../../generated/prisma/client.js";
import { errors } from "../../lib/errors.js";
import { writeTx } from "../../events/write-tx.js";
import { resolveSettings } from "../../tenancy/settings-model.js";
import { assertWritable } from "../discussions/discussions.js";
import { reactionCountsOf, type ReactionCounts } from "../comments/dto.js";
import { lockComment, upsertReader } from "../comments/bookkeeping.js";
import { visibleTo } from "../comments/visibility.js";

export interface ReactionToggle {
  commentId: string;
  readerId: string;
  kind: string;
  active: boolean;
  counts: ReactionCounts;
}

export interface ToggleReactionInput {
  kind?: string | null | undefined;
}

/**
 * Toggles the asserted reader's `kind` reaction. The kind must be one of the tenant's
 * reactionKinds (422). Only approved comments take reactions: a comment the caller cannot see is
 * 404; one they can see that is not approved (their own pending one, a tombstone) is 409
 * comment_not_approved. Locked/archived discussions: 409.
 */
export async function toggleReaction(ctx: RequestContext, commentId: string, input: ToggleReactionInput): Promise<ReactionToggle> {
  const reader = await requireReader(ctx);
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  const kinds = settings.reactionKinds;
  const parsed = z
    .object({
      kind: z
        .string({ error: (i) => (i.input === undefined || i.input === null ? "is required" : "must be a string") })
        .refine((k) => kinds.includes(k), `must be one of ${kinds.join(", ")}`),
    })
    .safeParse(input ?? {});
  if (!parsed.success) {
    throw errors.validation(parsed.error.issues.map((i) => ({ path: String(i.path[0] ?? "kind"), message: i.message })));
  }
  const { kind } = parsed.data;
  const tenantId = tenantIdOf(ctx);
  return writeTx(ctx.app, tenantId, async (tx, events) => {
    const { discussion, comment } = await lockComment(tx, tenantId, commentId);
    if (!(await visibleTo(ctx, comment))) throw errors.notFound("Comment");
    if (comment.status !== "approved") throw errors.conflict("comment_not_approved", "Only approved comments take reactions.");
    assertWritable(discussion);
    await upsertReader(tx, tenantId, reader);
    const removed = await tx.reaction.deleteMany({ where: { commentId, readerId: reader.id, kind } });
    const active = removed.count === 0;
    if (active) await tx.reaction.create({ data: { tenantId, commentId, readerId: reader.id, kind } });
    const counts = reactionCountsOf(comment);
    const n = (counts[kind] ?? 0) + (active ? 1 : -1);
    if (n > 0) counts[kind] = n;
    else delete counts[kind];
    await tx.comment.update({
      where: { id: commentId },
      data: {
        reactionCounts: counts as Prisma.InputJsonObject,
        reactionTotal: Object.values(counts).reduce((a, b) => a + b, 0),
      },
    });
    const result: ReactionToggle = { commentId, readerId: reader.id, kind, active, counts };
    await events.append({ discussionId: comment.discussionId, type: "reaction_toggled", data: { reaction: result } });
    return result;
  });
}
