// Whom a local reply mentions: the remote author of the comment it answers (their actor, named
// `@user@domain` from its document, fetched through the guarded, cached loader), else nobody.
import { type Context } from "@fedify/fedify";
import { isActor } from "@fedify/vocab";
import type { FederationData } from "./context.js";
import type { NoteRow } from "./objects.js";

export async function mentionOf(ctx: Context<FederationData>, c: NoteRow): Promise<{ actorId: string; name: string } | null> {
  if (!c.parentActorId) return null;
  const actorId = URL.parse(c.parentActorId);
  if (!actorId) return null;
  const actor = await ctx.lookupObject(actorId).catch(() => null);
  const user = isActor(actor) ? actor.preferredUsername?.toString() : undefined;
  return { actorId: actorId.href, name: `@${user ?? actorId.pathname.split("/").filter(Boolean).pop() ?? "someone"}@${actorId.host}` };
}
