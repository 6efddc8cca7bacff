// Votes on comments (contract section 18): a reader's one vote per comment, 1, -1 or 0 (taken back).
// Exact under concurrency: the vote (database function eng_vote in prisma/sql/45-votes.sql, one
// statement) runs under the discussion row lock, the primary key (comment, reader) allows one row,
// and the comment's upvotes, downvotes, score and Wilson lower bound change in the same statement.
import { loadTenant, requireReader, store, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { type VoteMode } from "../../tenancy/settings/formatting.js";
import { canModerate } from "../comments/visibility.js";
import type { VoteResult } from "../../events/write-results.js";

/** A vote as eng_vote answers it and its reaction_toggled event carries it (src/events/write-results.ts). */
export type { VoteResult };

export interface VoteInput {
  value?: unknown;
}

/** The vote's value as the tenant's mode allows it, or the 422 that says why not. */
function checkValue(value: unknown, mode: Exclude<VoteMode, "off">): 1 | -1 | 0 {
  if (value === undefined || value === null) throw errors.validation([{ path: "value", message: "is required" }]);
  if (value !== 1 && value !== -1 && value !== 0) throw errors.validation([{ path: "value", message: "must be 1, -1 or 0" }]);
  if (value === -1 && mode === "up") {
    throw errors.validation([{ path: "value", message: 'must be 1 or 0: downvotes are off (settings votes is "up")' }]);
  }
  return value;
}

/**
 * The asserted reader votes `value` on a comment (0 takes a vote back; the same value again changes
 * nothing and tells no one). Votes off: 409 votes_disabled. -1 under `votes: "up"` and a vote on one's
 * own comment: 422. A comment the caller cannot see: 404; one that is not approved: 409
 * comment_not_approved; a locked or archived discussion: 409; a banned reader: 403.
 */
export async function vote(ctx: RequestContext, commentId: string, input: VoteInput | null | undefined): Promise<VoteResult> {
  const reader = await requireReader(ctx);
  const { votes } = resolveSettings((await loadTenant(ctx)).settings);
  if (votes === "off") throw errors.votesDisabled();
  const value = checkValue(input?.value, votes);
  return store(ctx).write("eng_vote", {
    comment: commentId,
    reader: reader.id,
    name: reader.name,
    avatar: reader.avatarUrl,
    moderator: canModerate(ctx),
    value,
    at: ctx.app.clock.now(),
  });
}
