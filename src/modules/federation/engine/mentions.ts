// Whom a local reply mentions: the remote author of the comment it answers (their actor, named
// `@user@domain` as read of its document: remote-actors.ts), else nobody.
import { type Context } from "@fedify/fedify";
import type { FederationData } from "./context.js";
import type { NoteRow } from "./objects.js";
import { remoteActor } from "./remote-actors.js";

export async function mentionOf(ctx: Context<FederationData>, c: NoteRow): Promise<{ actorId: string; name: string } | null> {
  if (!c.parentActorId) return null;
  const actorId = URL.parse(c.parentActorId);
  if (!actorId) return null;
  const user = (await remoteActor(ctx, actorId))?.preferredUsername;
  return { actorId: actorId.href, name: `@${user ?? actorId.pathname.split("/").filter(Boolean).pop() ?? "someone"}@${actorId.host}` };
}
