// Reactions: a reader toggles one reaction of a kind on a comment. Exact under concurrency: the
// toggle (database function eng_toggle_reaction, one statement) runs under the discussion row lock
// (one writer per discussion at a time), the primary key (comment, reader, kind) allows one row,
// and the counts on the comment are updated in the same statement.
import { loadTenant, requireReader, store, type RequestContext } from "../../context/request.js";
import { parseKind } from "./kind.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { canModerate } from "../comments/visibility.js";
import type { ReactionToggle } from "../../events/write-results.js";

/** A reaction toggled: the row eng_toggle_reaction answers (declared in src/events/write-results.ts). */
export type { ReactionToggle };

export interface ToggleReactionInput {
  kind?: string | null | undefined;
}

/**
 * Toggles the asserted reader's `kind` reaction. The kind must be one of the tenant's
 * reactionKinds (422). Only approved comments take reactions: a comment the caller cannot see is
 * 404; one they can see that is not approved (their own pending one, a tombstone) is 409
 * comment_not_approved. Locked/archived discussions: 409.
 */
export async function toggleReaction(
  ctx: RequestContext,
  commentId: string,
  input: ToggleReactionInput,
  /** a remote Like and its actor: its row in federation_objects written by the toggle's own statement as it turns the reaction on, deleted as it turns it off */
  remote?: { objectId: string; actorId: string },
): Promise<ReactionToggle> {
  const reader = await requireReader(ctx);
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  const kind = parseKind(settings.reactionKinds, input);
  const args = {
    comment: commentId,
    reader: reader.id,
    name: reader.name,
    avatar: reader.avatarUrl,
    moderator: canModerate(ctx),
    kind,
    at: ctx.app.clock.now(),
  };
  // a remote Like and its row in federation_objects: one statement (a function of its own)
  return remote
    ? store(ctx).write("eng_toggle_remote_reaction", { ...args, remoteObject: remote.objectId, remoteActor: remote.actorId })
    : store(ctx).write("eng_toggle_reaction", args);
}
