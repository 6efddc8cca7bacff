// Page reactions (contract section 18): a reader toggles one reaction of a kind on a discussion
// itself. Exact under concurrency as comment reactions are: the toggle (database function
// eng_toggle_discussion_reaction, one statement) runs under the discussion row lock, the primary key
// (tenant, discussion, reader, kind) allows one row, and the discussion's counts change in the same
// statement. A discussion nobody has written to yet is created by the toggle, as a post creates it
// (a publishable key's toggle, like its post, is 404 there instead).
import { currentReader, db, loadTenant, requireReader, store, tenantIdOf, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import type { DiscussionReactionToggle } from "../../events/write-results.js";
import { getDiscussion } from "../discussions/discussions.js";
import { requestBatch } from "../../context/request-batch.js";
import { parseKind } from "./kind.js";

export type { DiscussionReactionToggle };

export interface ToggleDiscussionReactionInput {
  kind?: string | null | undefined;
}

/**
 * Toggles the asserted reader's `kind` reaction on the discussion. With no pageReactionKinds set:
 * 409 page_reactions_disabled; a kind not among them: 422. Banned readers (403), archived or locked
 * discussions (409) are refused as for comment reactions. An unknown discussion is created (as a
 * post creates it); through a publishable key, which never creates discussions, it is 404.
 */
export async function toggleDiscussionReaction(
  ctx: RequestContext,
  discussionId: string,
  input: ToggleDiscussionReactionInput,
): Promise<DiscussionReactionToggle> {
  const reader = await requireReader(ctx);
  checkDiscussionId(discussionId);
  const kinds = resolveSettings((await loadTenant(ctx)).settings).pageReactionKinds;
  if (kinds.length === 0) throw errors.pageReactionsDisabled();
  const kind = parseKind(kinds, input);
  // a publishable key never creates a discussion (as for a post): an unknown one is 404
  if (ctx.principal?.kind === "publishable") await getDiscussion(ctx, discussionId);
  return store(ctx).write("eng_toggle_discussion_reaction", {
    discussion: discussionId,
    reader: reader.id,
    name: reader.name,
    avatar: reader.avatarUrl,
    kind,
    at: ctx.app.clock.now(),
  });
}

const pageReactionsOf = requestBatch(async (ctx, discussionIds) => {
  const reader = await currentReader(ctx);
  if (!reader) return null;
  const rows = await db(ctx).pageReaction.findMany({
    where: { tenantId: tenantIdOf(ctx), readerId: reader.id, discussionId: { in: discussionIds } },
    select: { discussionId: true, kind: true },
    orderBy: { kind: "asc" },
  });
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.discussionId, [...(out.get(r.discussionId) ?? []), r.kind]);
  return out;
});

/**
 * The asserting reader's own page reactions on a discussion (Discussion.myReactions), kinds in
 * alphabetical order; null without an identity assertion. One query per request for every
 * discussion it resolves (a list of 20 costs one statement).
 */
export async function myPageReactions(ctx: RequestContext, discussionId: string): Promise<string[] | null> {
  const found = await pageReactionsOf(ctx, discussionId);
  return found ? (found.get(discussionId) ?? []) : null;
}
