// How many comments wait in the moderation queue (the console's "Moderation (3)"): one count on the
// queue's partial index (comments_queue_idx: pending, rejected and deleted only), stopped at QUEUE_COUNT_CAP so a
// flooded tenant's count costs no more than that.
import { store, type RequestContext } from "../../context/request.js";

/** Counting stops here; the console shows "1000+". */
export const QUEUE_COUNT_CAP = 1000;

const COUNT = `SELECT count(*)::int AS n FROM (SELECT 1 FROM comments c WHERE c.tenant_id = $1 AND c.status = 'pending' LIMIT ${QUEUE_COUNT_CAP}) q`;

export async function countPending(ctx: RequestContext): Promise<number> {
  const rows = await store(ctx).sql.query<{ n: number }>(COUNT, [], "moderation_pending_count");
  return rows[0]?.n ?? 0;
}
