// What an erasure of a fediverse reader (`ap:<actor id>`, docs/privacy.md, src/modules/readers/erasure.ts)
// removes besides what every reader's erasure does: the tenant's rows naming the actor — the remote
// Notes and Likes of theirs tied to comments (federation_objects) and their follow (federation_followers:
// nothing more is sent to them) — and, across the server, what Fedify cached of them in federation_kv:
// their actor document and every document under its id (their key, their statuses), and their public
// key. A cache, shared by the tenants: a later activity of theirs fetches it again. The ids of their
// activities Fedify keeps for a day to drop a redelivery (activityIdempotence) stay until they expire,
// so a replay of what they sent before the erasure is not applied again. Idempotent: an erasure run
// again finds nothing.
//
// The tenant's rows go in the erasure's last statement, with the reader's profile and the rest
// (FORGET_ACTOR_ROWS, in one transaction: a failure there keeps both, never one without the other).
// The server's cache is not the tenant's (no tenant_id: its statement is the engine's, outside the
// tenant's store) and is forgotten after that commit (forgetCachedRemoteActor): an erasure that fails
// before leaves it cached, which the next erasure, or its retry, forgets.
import type { RequestContext } from "../../context/request.js";
import { forgetCachedActor } from "./engine/kv-store.js";

/** The actor a reader id `ap:…` names; null for another reader. */
export const remoteActorOf = (readerId: string): string | null => (readerId.startsWith("ap:") ? readerId.slice(3) : null);

/**
 * The tenant's rows naming the actor (their remote objects, their follow, and the activities of theirs
 * the inbox stored for the tenant: applied or not, engine/inbound.ts), deleted as the WITH of the erasure's last statement
 * (src/modules/readers/erasure.ts; PostgreSQL runs a WITH's DELETE whether or not the SELECT reads it):
 * `$1` the tenant, `$2` the reader id, `$3` the actor (remoteActorOf; null for another reader: nothing
 * is deleted).
 */
export const FORGET_ACTOR_ROWS = `WITH forgotten_objects AS (
    DELETE FROM federation_objects WHERE tenant_id = $1 AND $3::text IS NOT NULL AND (reader_id = $2 OR actor_id = $3)),
  forgotten_follows AS (DELETE FROM federation_followers WHERE tenant_id = $1 AND actor_id = $3),
  forgotten_inbound AS (
    DELETE FROM webhook_deliveries WHERE tenant_id = $1 AND $3::text IS NOT NULL AND kind = 'activitypub_inbound'
       AND (message->'activity'->>'actor' = $3 OR message->'activity'->'actor'->>'id' = $3))`;

/** After the erasure's commit: what the server cached of the actor a reader id `ap:…` names (nothing for another reader). */
export async function forgetCachedRemoteActor(ctx: RequestContext, readerId: string): Promise<number> {
  const actorId = remoteActorOf(readerId);
  // the cache is the server's, not the tenant's (engine/kv-store.ts)
  return actorId === null ? 0 : forgetCachedActor(ctx.app, actorId);
}
