// What an erasure of a fediverse reader (`ap:<actor id>`, docs/privacy.md, src/modules/readers/erasure.ts)
// removes besides what every reader's erasure does: the tenant's rows naming the actor — the remote
// Notes and Likes of theirs tied to comments (federation_objects) and their follow (federation_followers:
// nothing more is sent to them) — and, across the server, what Fedify cached of them in federation_kv:
// their actor document and every document under its id (their key, their statuses), and their public
// key. A cache, shared by the tenants: a later activity of theirs fetches it again. The ids of their
// activities Fedify keeps for a day to drop a redelivery (activityIdempotence) stay until they expire,
// so a replay of what they sent before the erasure is not applied again. Idempotent: an erasure run
// again finds nothing.
import { store, type RequestContext } from "../../context/request.js";
import { forgetCachedActor } from "./engine/kv-store.js";

export interface ForgottenActor {
  objects: number;
  follows: number;
  cached: number;
}

/** Removes what is kept of the actor a reader id `ap:…` names (nothing for another reader). */
export async function forgetRemoteActor(ctx: RequestContext, readerId: string): Promise<ForgottenActor | null> {
  if (!readerId.startsWith("ap:")) return null;
  const actorId = readerId.slice(3);
  const sql = store(ctx).sql;
  const objects = await sql.query(
    `DELETE FROM federation_objects WHERE tenant_id = $1 AND (reader_id = $2 OR actor_id = $3) RETURNING object_id`,
    [readerId, actorId],
    "federation_erase_objects",
  );
  const follows = await sql.query(
    `DELETE FROM federation_followers WHERE tenant_id = $1 AND actor_id = $2 RETURNING actor_id`,
    [actorId],
    "federation_erase_follows",
  );
  // the cache is the server's, not the tenant's (engine/kv-store.ts)
  const cached = await forgetCachedActor(ctx.app, actorId);
  return { objects: objects.length, follows: follows.length, cached };
}
