// The actor's outbox (contract section 28): its Create(Article) activities, one per announced
// discussion that still has its url, newest first (by the Article's `published`, the discussion's
// creation; then by id), as an OrderedCollection with `totalItems` and pages of OUTBOX_PAGE. Each
// is the announcement as it was delivered: the id its delivery carried (federation_discussions.
// activity_id, written when the announcement was made into deliveries: outbound.ts), around the
// Article as it is now. A cursor it did not issue is an empty page.
import type { Context } from "@fedify/fedify";
import { Create } from "@fedify/vocab";
import { decodeTimeIdCursor, encodeCursor, timeIdCursor } from "../../../lib/pagination.js";
import type { FederationData } from "./context.js";
import { articleOf, type DiscussionRow } from "./objects.js";

/** Activities per page of the outbox. */
export const OUTBOX_PAGE = 20;

const TAG = "ob";

interface OutboxRow extends DiscussionRow {
  url: string;
  activityId: string;
}

/** A cursor of this outbox as [time, id], or null when it is not one. */
function positionOf(cursor: string): [Date, string] | null {
  try {
    return decodeTimeIdCursor(cursor, TAG);
  } catch {
    return null;
  }
}

export async function outboxPage(
  ctx: Context<FederationData>,
  tenantId: string,
  cursor: string,
): Promise<{ items: Create[]; nextCursor: string | null }> {
  const after = cursor === "" ? null : positionOf(cursor);
  if (cursor !== "" && after === null) return { items: [], nextCursor: null };
  const rows = await ctx.data.app.stores(tenantId).sql.query<OutboxRow>(
    `SELECT d.id, d.title, d.url, d.created_at AS "createdAt", d.comment_count AS "commentCount", f.activity_id AS "activityId"
       FROM federation_discussions f
       JOIN discussions d ON d.tenant_id = f.tenant_id AND d.id = f.discussion_id
      WHERE f.tenant_id = $1 AND f.activity_id IS NOT NULL AND d.url IS NOT NULL
        AND ($2::timestamptz IS NULL OR (d.created_at, d.id) < ($2::timestamptz, $3::text))
      ORDER BY d.created_at DESC, d.id DESC
      LIMIT $4`,
    [after?.[0] ?? null, after?.[1] ?? null, OUTBOX_PAGE + 1],
    "federation_outbox_page",
  );
  const actor = ctx.getActorUri(tenantId);
  const items = rows.slice(0, OUTBOX_PAGE).map((r) => {
    const article = articleOf(ctx, tenantId, r);
    return new Create({
      id: new URL(r.activityId),
      actor,
      object: article,
      to: article.toId,
      cc: ctx.getFollowersUri(tenantId),
      published: article.published,
    });
  });
  const last = rows.length > OUTBOX_PAGE ? rows[OUTBOX_PAGE - 1]! : null;
  return { items, nextCursor: last ? encodeCursor(timeIdCursor(last.createdAt, last.id, TAG)) : null };
}

/** How many activities the outbox lists. */
export async function outboxCount(ctx: Context<FederationData>, tenantId: string): Promise<number> {
  const [row] = await ctx.data.app.stores(tenantId).sql.query<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM federation_discussions f
       JOIN discussions d ON d.tenant_id = f.tenant_id AND d.id = f.discussion_id
      WHERE f.tenant_id = $1 AND f.activity_id IS NOT NULL AND d.url IS NOT NULL`,
    [],
    "federation_outbox_count",
  );
  return row?.n ?? 0;
}
