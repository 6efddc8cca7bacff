// Following a discussion (contract section 19): the reader of X-Service-Identity chooses, per
// discussion, `all` (every new visible comment by someone else becomes a new_comment item in their
// inbox), `replies` (the default: only replies to them) or `off` (not even replies: no reply item,
// notification_reply or reply email in that discussion, as GitHub's "Ignore"). Any key, publishable
// included. Kept in discussion_subscriptions, `replies` being the absence of a row; the fan-out of a
// new comment to the followers runs after its commit (engine/fanout.ts).
import { requireReader, type RequestContext, store } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { getDiscussion } from "../discussions/discussions.js";

export const FOLLOW_MODES = ["all", "replies", "off"] as const;
export type FollowMode = (typeof FOLLOW_MODES)[number];

export interface DiscussionSubscription {
  discussionId: string;
  mode: FollowMode;
}

const READ = `SELECT mode::text AS mode FROM discussion_subscriptions WHERE tenant_id = $1 AND discussion_id = $2 AND reader_id = $3`;
/** the subscription, and (with `all`, once) the discussion's row told that someone follows it: a post asks who only then */
const WRITE = `WITH written AS (
    INSERT INTO discussion_subscriptions (tenant_id, discussion_id, reader_id, mode, created_at, updated_at)
    VALUES ($1, $2, $3, $4::"FollowMode", $5, $5)
    ON CONFLICT (tenant_id, discussion_id, reader_id) DO UPDATE SET mode = EXCLUDED.mode, updated_at = EXCLUDED.updated_at
  )
  UPDATE discussions SET followed = true WHERE tenant_id = $1 AND id = $2 AND $4 = 'all' AND NOT followed`;
const CLEAR = `DELETE FROM discussion_subscriptions WHERE tenant_id = $1 AND discussion_id = $2 AND reader_id = $3`;

/** The reader's subscription to a discussion (an unknown discussion → 404). */
export async function getMySubscription(ctx: RequestContext, discussionId: string): Promise<DiscussionSubscription> {
  const reader = await requireReader(ctx);
  await getDiscussion(ctx, discussionId);
  const rows = await store(ctx).sql.query<{ mode: FollowMode }>(READ, [discussionId, reader.id], "follow_read");
  return { discussionId, mode: rows[0]?.mode ?? "replies" };
}

/** Sets the reader's subscription to a discussion; `replies` removes it. */
export async function setMySubscription(
  ctx: RequestContext,
  discussionId: string,
  input: { mode?: unknown } | null | undefined,
): Promise<DiscussionSubscription> {
  const reader = await requireReader(ctx);
  const mode = input?.mode;
  if (typeof mode !== "string" || !(FOLLOW_MODES as readonly string[]).includes(mode)) {
    throw errors.validation([{ path: "mode", message: `must be one of ${FOLLOW_MODES.join(", ")}` }]);
  }
  // following a discussion never creates it: an unknown one is 404
  await getDiscussion(ctx, discussionId);
  if (mode === "replies") {
    await store(ctx).sql.query(CLEAR, [discussionId, reader.id], "follow_clear");
  } else {
    await store(ctx).sql.query(WRITE, [discussionId, reader.id, mode, ctx.app.clock.now()], "follow_write");
  }
  return { discussionId, mode: mode as FollowMode };
}
