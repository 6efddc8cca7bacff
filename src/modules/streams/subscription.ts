// GraphQL subscriptions, served over the graphql-sse protocol (/graphql distinct connections,
// /graphql/stream single connection). Fed by the same hub, replay and visibility as the SSE route.
import { builder } from "../../graphql/builder.js";
import { openDiscussionSubscription } from "./subscribe.js";
import type { StreamItem } from "../../stream/queue-sink.js";

type Connected = Extract<StreamItem, { kind: "connected" }>;
type EventItem = Extract<StreamItem, { kind: "event" }>;
type Timeout = Extract<StreamItem, { kind: "timeout" }>;

const StreamConnected = builder.objectRef<Connected>("StreamConnected").implement({
  description: "First item of a subscription, like the SSE `connected` frame.",
  fields: (t) => ({
    discussionId: t.exposeString("discussionId"),
    replayed: t.exposeInt("replayed"),
    truncated: t.exposeBoolean("truncated"),
    heartbeatSeconds: t.exposeInt("heartbeatSeconds"),
  }),
});

const StreamEvent = builder.objectRef<EventItem>("StreamEvent").implement({
  description: "A domain event: the envelope of contract section 5.",
  fields: (t) => ({
    id: t.id({ resolve: (i) => i.event.envelope.id }),
    seq: t.int({ resolve: (i) => i.event.seq }),
    type: t.string({ resolve: (i) => i.event.type }),
    tenantId: t.string({ resolve: (i) => i.event.envelope.tenantId }),
    discussionId: t.string({ resolve: (i) => i.event.envelope.discussionId }),
    occurredAt: t.field({ type: "DateTime", resolve: (i) => i.event.envelope.occurredAt }),
    data: t.field({ type: "JSON", resolve: (i) => i.event.envelope.data }),
  }),
});

const StreamConnectionTimeout = builder.objectRef<Timeout>("StreamConnectionTimeout").implement({
  description: "Last item before the server completes the subscription; resubscribe with `after` = the last seq.",
  fields: (t) => ({ reason: t.exposeString("reason") }),
});

const DiscussionStreamItem = builder.unionType("DiscussionStreamItem", {
  types: [StreamConnected, StreamEvent, StreamConnectionTimeout],
  resolveType: (item) => {
    switch (item.kind) {
      case "connected":
        return StreamConnected;
      case "event":
        return StreamEvent;
      default:
        return StreamConnectionTimeout;
    }
  },
});

builder.subscriptionType({});

builder.subscriptionField("discussionEvents", (t) =>
  t.field({
    type: DiscussionStreamItem,
    description:
      "The discussion's events: `connected`, then the replay of events after `after` (a seq) within the window, then live ones. " +
      "Auth: X-API-Key (+ X-Service-Identity), or a stream ticket.",
    args: {
      discussionId: t.arg.string({ required: true }),
      after: t.arg.int({ required: false }),
      ticket: t.arg.string({ required: false }),
    },
    authScopes: (_parent, args) => (args.ticket ? true : { browser: true }),
    subscribe: (_root, args, ctx) => openDiscussionSubscription(ctx, args),
    resolve: (item: StreamItem) => item,
  }),
);
