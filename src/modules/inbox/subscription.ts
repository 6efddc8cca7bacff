// The reader's own stream over GraphQL (graphql-sse, as discussionEvents): subscription `myInbox`,
// fed by the same hub, reads and caps as GET /api/v1/stream/me (src/stream-engine/reader-stream.ts).
// Yields a union: InboxStreamConnected first, then InboxItemAdded (an item, with its inbox seq) and
// InboxReadUpdate (the unread count after a mark-read), and StreamConnectionTimeout last.
import { builder } from "../../graphql/builder.js";
import { errors } from "../../lib/errors.js";
import { QueueSink, type ReaderStreamItem } from "../../stream-engine/queue-sink.js";
import type { ReaderFrame } from "../../stream-engine/reader-stream.js";
import type { RequestContext } from "../../context/request.js";
import { readerStreamCaller } from "../streams/engine/access.js";
import { MAX_QUEUED_ITEMS } from "../streams/subscription-feed.js";
import { StreamConnectionTimeout } from "../streams/subscription.js";
import { InboxItemObject } from "./graphql.js";
import type { InboxItem } from "./inbox.js";

type Connected = Extract<ReaderStreamItem, { kind: "reader-connected" }>;
type FrameItem = Extract<ReaderStreamItem, { kind: "frame" }>;

const InboxStreamConnected = builder.objectRef<Connected>("InboxStreamConnected").implement({
  description: "First item of myInbox, like the SSE `connected` frame of GET /api/v1/stream/me.",
  fields: (t) => ({
    position: t.exposeInt("position", {
      description:
        "The inbox seq the subscription continues after (`after`, or the reader's latest seq without one): resubscribe with " +
        "`after` = the last seq seen, this one included.",
    }),
    replayed: t.exposeInt("replayed"),
    unreadCount: t.exposeInt("unreadCount"),
    heartbeatSeconds: t.exposeInt("heartbeatSeconds"),
  }),
});

const InboxItemAdded = builder.objectRef<FrameItem>("InboxItemAdded").implement({
  description: "An inbox item (SSE `inbox_item`), replayed or new, in seq order.",
  fields: (t) => ({
    seq: t.int({ description: "The reader's inbox sequence (the SSE id).", resolve: (i) => i.frame.seq ?? 0 }),
    item: t.field({ type: InboxItemObject, resolve: (i) => i.frame.value as InboxItem }),
  }),
});

const InboxReadUpdate = builder.objectRef<FrameItem>("InboxReadUpdate").implement({
  description: "The reader marked items read (here or in another tab; SSE `inbox_read`): their unread count now.",
  fields: (t) => ({ unreadCount: t.int({ resolve: (i) => (i.frame.value as { unreadCount: number }).unreadCount }) }),
});

const MyInboxStreamItem = builder.unionType("MyInboxStreamItem", {
  types: [InboxStreamConnected, InboxItemAdded, InboxReadUpdate, StreamConnectionTimeout],
  resolveType: (item: ReaderStreamItem) => {
    switch (item.kind) {
      case "reader-connected":
        return InboxStreamConnected;
      case "frame":
        return (item.frame as ReaderFrame).event === "inbox_item" ? InboxItemAdded : InboxReadUpdate;
      default:
        return StreamConnectionTimeout;
    }
  },
});

async function openMyInbox(ctx: RequestContext, args: { after?: number | null; ticket?: string | null }) {
  const after = args.after ?? null;
  if (after !== null && after < 0) throw errors.validation([{ path: "after", message: "must be a non-negative inbox seq" }]);
  const caller = await readerStreamCaller(ctx, { ticket: args.ticket, lastEventId: after });
  const sink = new QueueSink<ReaderStreamItem>(MAX_QUEUED_ITEMS);
  await ctx.app.streams.openReader(
    { tenantId: caller.tenantId, readerId: caller.readerId, after, settings: caller.settings, ticket: caller.ticket },
    sink,
  );
  return sink;
}

builder.subscriptionField("myInbox", (t) =>
  t.field({
    type: MyInboxStreamItem,
    description:
      "The reader's own stream (GET /api/v1/stream/me): InboxStreamConnected, then the items after `after` (an inbox seq), then " +
      "new items and read updates. Auth: X-API-Key + X-Service-Identity, or a ticket minted with scope me.",
    args: { after: t.arg.int({ required: false }), ticket: t.arg.string({ required: false }) },
    authScopes: (_parent, args) => (args.ticket ? true : { browser: true }),
    subscribe: (_root, args, ctx) => openMyInbox(ctx, args),
    resolve: (item: ReaderStreamItem) => item,
  }),
);
