// Reactions: a reader toggles one reaction of a kind on a comment. Exact under concurrency: the
// toggle (database function eng_toggle_reaction, one statement) runs under the discussion row lock
// (one writer per discussion at a time), the primary key (comment, reader, kind) allows one row,
// and the counts on the comment are updated in the same statement.
import { z } from "zod";
import { loadTenant, requireReader, tenantIdOf, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { runWrite } from "../../events/statement.js";
import { resolveSettings } from "../../tenancy/settings-model.js";
import { canModerate } from "../comments/visibility.js";
import type { ReactionToggle } from "../../events/write-results.js";

/** A reaction toggled: the row eng_toggle_reaction answers (declared in src/events/write-results.ts). */
export type { ReactionToggle };

/** The input schema per list of reaction kinds (a tenant setting): built once, not per request. */
const kindSchemas = new WeakMap<readonly string[], z.ZodType<{ kind: string }>>();

function kindSchema(kinds: readonly string[]) {
  let schema = kindSchemas.get(kinds);
  if (!schema) {
    schema = z.object({
      kind: z
        .string({ error: (i) => (i.input === undefined || i.input === null ? "is required" : "must be a string") })
        .refine((k) => kinds.includes(k), `must be one of ${kinds.join(", ")}`),
    });
    kindSchemas.set(kinds, schema);
  }
  return schema;
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
  const parsed = kindSchema(settings.reactionKinds).safeParse(input ?? {});
  if (!parsed.success) {
    throw errors.validation(parsed.error.issues.map((i) => ({ path: String(i.path[0] ?? "kind"), message: i.message })));
  }
  const { kind } = parsed.data;
  return runWrite(ctx, "eng_toggle_reaction", {
    tenant: tenantIdOf(ctx),
    comment: commentId,
    reader: reader.id,
    name: reader.name,
    avatar: reader.avatarUrl,
    moderator: canModerate(ctx),
    kind,
    at: ctx.app.clock.now(),
  });
}
