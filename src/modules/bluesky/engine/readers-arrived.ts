// A reader on a page whose discussion is linked to a Bluesky post (contract section 30): the stream
// route (src/modules/streams/sse-route.ts) calls this when a stream opens, before any request context
// of the tenant exists (a ticket's stream), hence here, on the tenant's store by its id.
import type { AppServices } from "../../../context/request.js";
import { MIN_POLL_MS } from "./pace.js";

/**
 * Someone opened the discussion's stream (a reader on the page): a linked post whose next read is
 * later than a minute after its last one is read then instead (contract section 30: "at most every
 * 60 s a discussion while it has readers"; the poller's pace keeps it there while they stay,
 * engine/pace.ts). One statement, a row of the tenant's or none.
 */
export async function readersArrived(app: AppServices, tenantId: string, discussionId: string): Promise<void> {
  await app.stores(tenantId).sql.query(
    `UPDATE bluesky_links SET next_poll_at = GREATEST($3::timestamptz, polled_at + make_interval(secs => $4::int / 1000.0))
      WHERE tenant_id = $1 AND discussion_id = $2 AND uri IS NOT NULL AND polled_at IS NOT NULL
        AND next_poll_at > GREATEST($3::timestamptz, polled_at + make_interval(secs => $4::int / 1000.0))`,
    [discussionId, app.clock.now(), MIN_POLL_MS],
    "bluesky_readers_arrived",
  );
}
