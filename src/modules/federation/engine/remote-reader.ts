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
import { sha256 } from "../../../lib/sha256.js";
import type { FederationData } from "./context.js";

export const remoteReaderId = (actorId: URL | string) => `ap:${String(actorId)}`;

/** How many actors' readers the process keeps (memo below): a few hundred bytes each. */
export const REMOTE_READERS_KEPT = 1_000;

/**
 * The readers made of actors' documents, by actor id, with the digest of the document they were made of.
 * Reading an actor (Fedify's JSON-LD expansion of its document and of its keys) was more than half of
 * applying an inbound activity; the document itself comes from the loader's cache (5 minutes), so a
 * reader is made again exactly when its document changed, or after an erasure forgot it (the next
 * load fetches it again). Least recently used first out.
 */
const made = new Map<string, { digest: string; reader: ReaderIdentity }>();

/** The reader an actor is (its document fetched through the guarded, cached loader, else its id alone). */
export async function remoteReader(
  ctx: Pick<Context<FederationData>, "documentLoader" | "lookupObject">,
  actorId: URL,
): Promise<ReaderIdentity> {
  const digest = await ctx
    .documentLoader(actorId.href)
    .then((d) => sha256(JSON.stringify(d.document), "base64url"))
    .catch(() => null);
  const kept = digest === null ? undefined : made.get(actorId.href);
  if (kept) made.delete(actorId.href);
  if (kept && kept.digest === digest) {
    made.set(actorId.href, kept);
    return kept.reader;
  }
  // an actor whose document does not load is named by its id (and not kept: it may load next time)
  const fetched = digest === null ? null : await ctx.lookupObject(actorId).catch(() => null);
  const actor: Actor | null = isActor(fetched) ? fetched : null;
  const handle = `@${actor?.preferredUsername?.toString() ?? actorId.pathname.split("/").filter(Boolean).pop() ?? "someone"}@${actorId.host}`;
  const name = clean(actor?.name?.toString() ?? "") || clean(handle);
  let avatarUrl: string | null = null;
  const icon = await actor?.getIcon().catch(() => null);
  const iconUrl = icon?.url instanceof URL ? icon.url : (icon?.url?.href ?? null);
  if (iconUrl && /^https?:$/.test(iconUrl.protocol) && iconUrl.href.length <= 2048) avatarUrl = iconUrl.href;
  const reader = { id: remoteReaderId(actorId), name, avatarUrl };
  if (digest !== null) {
    made.set(actorId.href, { digest, reader });
    if (made.size > REMOTE_READERS_KEPT) made.delete(made.keys().next().value!);
  }
  return reader;
}

/** A request context of the tenant, acting as `reader`. */
export function remoteContext(app: AppServices, tenant: Tenant, reader: ReaderIdentity): RequestContext {
  return contextForTenant(app, tenant, { kind: "key", keyId: "activitypub", capabilities: new Set() }, reader);
}
