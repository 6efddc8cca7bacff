// A remote actor as the service's reader (contract section 24): reader `ap:<actor id>`, named by the
// actor's `name`, else `@user@domain`; its avatar the actor's `icon` (an http(s) URL), as read of its
// document (remote-actors.ts). Writes made for it run as the tenant's own requests would, through the
// same domain functions: a request context of the tenant (a key with no capability: never a
// moderator) whose asserted reader is this one.
import type { Tenant } from "../../../generated/prisma/client.js";
import { contextForTenant, type AppServices, type RequestContext } from "../../../context/request.js";
import type { ReaderIdentity } from "../../../auth/identity.js";
import { cleanRemoteName as clean } from "../../../lib/reader-name.js";
import { remoteActor, type ActorReading } from "./remote-actors.js";

export const remoteReaderId = (actorId: URL | string) => `ap:${String(actorId)}`;

/** The reader an actor is (what is read of its document: remote-actors.ts), else its id alone. */
export async function remoteReader(ctx: ActorReading, actorId: URL): Promise<ReaderIdentity> {
  const actor = await remoteActor(ctx, actorId);
  const handle = `@${actor?.preferredUsername ?? actorId.pathname.split("/").filter(Boolean).pop() ?? "someone"}@${actorId.host}`;
  const name = clean(actor?.name ?? "") || clean(handle);
  const icon = actor?.iconUrl ? URL.parse(actor.iconUrl) : null;
  const avatarUrl = icon && /^https?:$/.test(icon.protocol) && icon.href.length <= 2048 ? icon.href : null;
  return { id: remoteReaderId(actorId), name, avatarUrl };
}

/** A request context of the tenant, acting as `reader`. */
export function remoteContext(app: AppServices, tenant: Tenant, reader: ReaderIdentity): RequestContext {
  return contextForTenant(app, tenant, { kind: "key", keyId: "activitypub", capabilities: new Set() }, reader);
}
