// Read-your-writes for comment search (contract section 26): the words are read from comment_search,
// which the search projector writes after the commit (engine/search-projector.ts), so a comment is
// found by them only once the projector has passed its event. A search carrying X-Service-Consistency
// (the token a write answers with; any, as the documents are not where the token's position is) first
// waits until the documents hold every recent event of the tenant that had committed when it came:
// each discussion with an event in the last RECENT_MS (by the events' times, the writers' clocks)
// whose head is past its position then, until its position reaches that head. Those discussions are
// found from the log, whatever the number of the tenant's discussions: its partitions of the days the
// time names (today's, and yesterday's just after midnight), each read by the tenant's prefix of its
// (tenant, discussion, seq) index (the log has no index by tenant and time: a post would write it); an
// event older than that is one the projector has long applied, unless it is stopped. It hands them to
// this instance's projector, looks again each time the projector ends a run of steps (or every
// RECHECK_MS, when another instance projects them), and answers after at most PROJECTION_WAIT_MS with
// what the documents hold. The reads go where the search's go (a replica that has replayed past the
// token, else the primary), so what it waited for is what the search sees.
import { type RequestContext, store, tenantIdOf } from "../../context/request.js";

/** the longest a search waits for the projector */
export const PROJECTION_WAIT_MS = 1_000;
/** how often the positions are read again while this instance's projector does not say it ended a run */
const RECHECK_MS = 50;
/** discussions behind looked at most (more than this behind: the projector is far behind, and waiting is no help) */
const BEHIND_MAX = 500;
/** how far back the events whose discussions are looked at go */
export const RECENT_MS = 5 * 60_000;

/** the tenant's discussions with an event since $2 whose head is past their position, with that head */
const BEHIND = `SELECT d.id, d.seq FROM discussions d
  LEFT JOIN search_positions p ON p.tenant_id = d.tenant_id AND p.discussion_id = d.id
 WHERE d.tenant_id = $1 AND d.seq > COALESCE(p.seq, 0)
   AND d.id IN (SELECT e.discussion_id FROM events e WHERE e.tenant_id = $1 AND e.occurred_at >= $2)
 LIMIT ${BEHIND_MAX}`;
/** which of these discussions ($2) have not reached these heads ($3) */
const STILL_BEHIND = `SELECT k.id FROM unnest($2::text[], $3::int[]) AS k(id, seq)
  LEFT JOIN search_positions p ON p.tenant_id = $1 AND p.discussion_id = k.id
 WHERE COALESCE(p.seq, 0) < k.seq`;

/** Waits (at most PROJECTION_WAIT_MS) until the search documents hold what had committed when the request came; whether they do. */
export async function untilProjected(ctx: RequestContext): Promise<boolean> {
  const tenantId = tenantIdOf(ctx);
  const sql = store(ctx).sql;
  const since = new Date(ctx.app.clock.now().getTime() - RECENT_MS);
  let behind = await sql.query<{ id: string; seq: number }>(BEHIND, [since], "search_behind");
  if (behind.length === 0) return true;
  const deadline = Date.now() + PROJECTION_WAIT_MS;
  ctx.app.search.nudge(behind.map((d) => ({ tenantId, discussionId: d.id })));
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await ctx.app.search.passed(Math.min(left, RECHECK_MS));
    const still = new Set(
      (await sql.query<{ id: string }>(STILL_BEHIND, [behind.map((d) => d.id), behind.map((d) => d.seq)], "search_still_behind")).map(
        (r) => r.id,
      ),
    );
    if (still.size === 0) return true;
    behind = behind.filter((d) => still.has(d.id));
  }
}
