// Opens a GraphQL subscription on a discussion: same auth, caps, replay and visibility as SSE.
import type { RequestContext } from "../../context/request.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { errors } from "../../lib/errors.js";
import { streamCaller } from "./engine/access.js";
import { QueueSink } from "../../stream-engine/queue-sink.js";

/** A subscriber more than this many items behind is cut off. */
export const MAX_QUEUED_ITEMS = 1_000;

export async function openDiscussionSubscription(
  ctx: RequestContext,
  args: { discussionId: string; after?: number | null; ticket?: string | null },
): Promise<QueueSink> {
  checkDiscussionId(args.discussionId, "discussionId");
  if (args.after !== undefined && args.after !== null && args.after < 0) {
    throw errors.validation([{ path: "after", message: "must be a non-negative seq" }]);
  }
  const hub = ctx.app.streams;
  // `after` plays Last-Event-ID's part, for a ticket's resume as well: a redeemed ticket resubscribes with it
  const caller = await streamCaller(ctx, { discussionId: args.discussionId, ticket: args.ticket, lastEventId: args.after ?? null });
  const sink = new QueueSink(MAX_QUEUED_ITEMS);
  await hub.open(
    {
      tenantId: caller.tenantId,
      discussionId: args.discussionId,
      viewer: caller.viewer,
      after: args.after ?? null,
      settings: caller.settings,
      ticket: caller.ticket,
      redeem: caller.redeem,
      address: caller.address,
    },
    sink,
  );
  return sink;
}
