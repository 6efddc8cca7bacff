// What the federation reads of a remote actor: its handle, name and icon (the reader it is:
// remote-reader.ts; the `@user@domain` a reply mentions: mentions.ts) and its inboxes (where an
// activity for it goes: outbound.ts). Its document is fetched by Fedify through the guarded, cached
// loader (document-loader.ts: the KV store, 5 minutes) each time; reading it (Fedify's JSON-LD
// expansion of the actor and of its keys) is what costs, and was more than half of applying an inbound
// activity. So the process keeps what it read of each actor beside the digest of the document it read
// it from, and reads the actor again exactly when the loader answers another document: an edited
// profile, or one fetched again after an erasure forgot it (kv-store.ts forgetCachedActor).
import { type Context } from "@fedify/fedify";
import { isActor } from "@fedify/vocab";
import { sha256 } from "../../../lib/sha256.js";
import type { FederationData } from "./context.js";

/** What is read of an actor's document. */
export interface RemoteActor {
  preferredUsername: string | null;
  name: string | null;
  /** its icon's URL as the document gives it (any scheme: the reader checks it) */
  iconUrl: string | null;
  inbox: string | null;
  sharedInbox: string | null;
}

/** How many actors the process keeps (a few hundred bytes each); the least recently used go first. */
export const REMOTE_ACTORS_KEPT = 1_000;

const kept = new Map<string, { digest: string; actor: RemoteActor | null }>();

export type ActorReading = Pick<Context<FederationData>, "documentLoader" | "lookupObject">;

/** The actor at `actorId`; null when its document does not load or is not an actor's. */
export async function remoteActor(ctx: ActorReading, actorId: URL): Promise<RemoteActor | null> {
  const digest = await ctx
    .documentLoader(actorId.href)
    .then((d) => sha256(JSON.stringify(d.document), "base64url"))
    .catch(() => null);
  // a document that does not load is not kept: it may load next time
  if (digest === null) return null;
  const seen = kept.get(actorId.href);
  if (seen) kept.delete(actorId.href);
  if (seen?.digest === digest) {
    kept.set(actorId.href, seen);
    return seen.actor;
  }
  const actor = await read(ctx, actorId);
  kept.set(actorId.href, { digest, actor });
  if (kept.size > REMOTE_ACTORS_KEPT) kept.delete(kept.keys().next().value!);
  return actor;
}

async function read(ctx: ActorReading, actorId: URL): Promise<RemoteActor | null> {
  const fetched = await ctx.lookupObject(actorId).catch(() => null);
  if (!isActor(fetched)) return null;
  const icon = await fetched.getIcon().catch(() => null);
  const iconUrl = icon?.url instanceof URL ? icon.url : (icon?.url?.href ?? null);
  return {
    preferredUsername: fetched.preferredUsername?.toString() ?? null,
    name: fetched.name?.toString() ?? null,
    iconUrl: iconUrl?.href ?? null,
    inbox: fetched.inboxId?.href ?? null,
    sharedInbox: fetched.endpoints?.sharedInbox?.href ?? null,
  };
}
