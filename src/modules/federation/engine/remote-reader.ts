// A remote actor as the service's reader (contract section 24): reader `ap:<actor id>`, named by the
// actor's `name`, else `@user@domain`; its avatar the actor's `icon` (an http(s) URL). The actor's
// document is fetched by Fedify through the guarded, cached loader (document-loader.ts). Writes made
// for it run as the tenant's own requests would, through the same domain functions: a request context
// of the tenant (a key with no capability: never a moderator) whose asserted reader is this one.
import { type Context } from "@fedify/fedify";
import { isActor, type Actor } from "@fedify/vocab";
import type { Tenant } from "../../../generated/prisma/client.js";
import { contextForTenant, type AppServices, type RequestContext } from "../../../context/request.js";
import type { ReaderIdentity } from "../../../auth/identity.js";
import { cleanRemoteName as clean } from "../../../lib/reader-name.js";
import type { FederationData } from "./context.js";

export const remoteReaderId = (actorId: URL | string) => `ap:${String(actorId)}`;

/** The reader an actor is (its document fetched through the guarded loader, else its id alone). */
export async function remoteReader(ctx: Context<FederationData>, actorId: URL, known?: Actor | null): Promise<ReaderIdentity> {
  let actor: Actor | null = known ?? null;
  if (!actor) {
    const fetched = await ctx.lookupObject(actorId).catch(() => null);
    actor = isActor(fetched) ? fetched : null;
  }
  const handle = `@${actor?.preferredUsername?.toString() ?? actorId.pathname.split("/").filter(Boolean).pop() ?? "someone"}@${actorId.host}`;
  const name = clean(actor?.name?.toString() ?? "") || clean(handle);
  let avatarUrl: string | null = null;
  const icon = await actor?.getIcon().catch(() => null);
  const iconUrl = icon?.url instanceof URL ? icon.url : (icon?.url?.href ?? null);
  if (iconUrl && /^https?:$/.test(iconUrl.protocol) && iconUrl.href.length <= 2048) avatarUrl = iconUrl.href;
  return { id: remoteReaderId(actorId), name, avatarUrl };
}

/** A request context of the tenant, acting as `reader`. */
export function remoteContext(app: AppServices, tenant: Tenant, reader: ReaderIdentity): RequestContext {
  return contextForTenant(app, tenant, { kind: "key", keyId: "activitypub", capabilities: new Set() }, reader);
}
