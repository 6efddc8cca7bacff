// GraphQL subscriptions, served over the graphql-sse protocol (/graphql distinct connections,
// /graphql/stream single connection). Fed by the same hub, replay and visibility as the SSE route.
import { builder } from "../../graphql/builder.js";
import { openDiscussionSubscription } from "./subscription-feed.js";
import type { StreamItem } from "../../stream-engine/queue-sink.js";
import { STREAM_EVENT_TYPES, type EventType } from "../../events/types.js";
import type { Discussion } from "../../generated/prisma/client.js";
import { CommentType } from "../comments/graphql.js";
import { commentFromJson } from "../comments/dto.js";
import type { CommentJson } from "../../events/write-results.js";
import { DiscussionType } from "../discussions/graphql.js";
import { ReactionToggleType } from "../reactions/graphql.js";
import type { ReactionToggle } from "../reactions/reactions.js";
import { DiscussionReactionToggleType } from "../reactions/graphql.js";
import type { DiscussionReactionToggle } from "../reactions/page-reactions.js";
import { VoteResultType } from "../votes/graphql.js";
import type { VoteResult } from "../votes/votes.js";

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
    position: t.exposeInt("position", {
      description:
        "The seq the subscription continues after (the SSE `connected` frame's id): `after`, or the head without one, or " +
        "when `truncated` the seq just before the oldest replayed event. Seqs never go backwards: resubscribe with " +
        "`after` = the last seq seen, this one included.",
    }),
  }),
});

export const EventTypeEnum = builder.enumType("EventType", { values: STREAM_EVENT_TYPES });

// The typed payloads (the envelope's `data`, contract section 5), one object type per resource.
const dataOf = (i: EventItem) => i.event.envelope.data as Record<string, unknown>;

const CommentEventData = builder.objectRef<EventItem>("CommentEventData").implement({
  description: "comment_* events: the comment as REST returns it.",
  fields: (t) => ({ comment: t.field({ type: CommentType, resolve: (i) => commentFromJson(dataOf(i).comment as CommentJson) }) }),
});

const ReactionEventData = builder.objectRef<EventItem>("ReactionEventData").implement({
  description: "reaction_toggled: who toggled which kind, and the comment's counts.",
  fields: (t) => ({ reaction: t.field({ type: ReactionToggleType, resolve: (i) => dataOf(i).reaction as ReactionToggle }) }),
});

const DiscussionReactionEventData = builder.objectRef<EventItem>("DiscussionReactionEventData").implement({
  description: "reaction_toggled of a page reaction (commentId null): who toggled which kind, and the discussion's counts.",
  fields: (t) => ({
    reaction: t.field({ type: DiscussionReactionToggleType, resolve: (i) => dataOf(i).reaction as DiscussionReactionToggle }),
  }),
});

const VoteEventData = builder.objectRef<EventItem>("VoteEventData").implement({
  description: 'reaction_toggled of kind "vote": who voted what, and the comment\'s tallies.',
  fields: (t) => ({ vote: t.field({ type: VoteResultType, resolve: (i) => dataOf(i).reaction as VoteResult }) }),
});

const DiscussionEventData = builder.objectRef<EventItem>("DiscussionEventData").implement({
  description: "discussion_* events: the discussion as REST returns it.",
  fields: (t) => ({
    discussion: t.field({
      type: DiscussionType,
      // the event's JSON names the counts `reactions`; the row `reactionCounts`
      resolve: (i) => {
        const d = dataOf(i).discussion as Record<string, unknown>;
        return { ...d, reactionCounts: d.reactions ?? {} } as unknown as Discussion;
      },
    }),
  }),
});

const ReplyNotification = builder
  .objectRef<{ readerId: string; commentId: string; parentId: string; discussionId: string }>("ReplyNotification")
  .implement({
    description: "A reply to the reader's comment (notification_reply, only on that reader's streams).",
    fields: (t) => ({
      readerId: t.exposeString("readerId"),
      commentId: t.exposeString("commentId"),
      parentId: t.exposeString("parentId"),
      discussionId: t.exposeString("discussionId"),
    }),
  });

const NotificationEventData = builder.objectRef<EventItem>("NotificationEventData").implement({
  fields: (t) => ({
    notification: t.field({
      type: ReplyNotification,
      resolve: (i) => dataOf(i).notification as { readerId: string; commentId: string; parentId: string; discussionId: string },
    }),
  }),
});

const EventPayload = builder.unionType("EventPayload", {
  description: "The event's `data`, typed by what it carries.",
  types: [CommentEventData, ReactionEventData, VoteEventData, DiscussionReactionEventData, DiscussionEventData, NotificationEventData],
  resolveType: (i) => {
    const type = i.event.type;
    if (type === "reaction_toggled") {
      const reaction = dataOf(i).reaction as { commentId?: unknown; kind?: unknown };
      if (reaction.commentId === null) return DiscussionReactionEventData;
      return reaction.kind === "vote" ? VoteEventData : ReactionEventData;
    }
    if (type === "notification_reply") return NotificationEventData;
    if (type.startsWith("discussion_")) return DiscussionEventData;
    return CommentEventData;
  },
});

const StreamEvent = builder.objectRef<EventItem>("StreamEvent").implement({
  description: "A domain event: the envelope of contract section 5.",
  fields: (t) => ({
    id: t.id({ resolve: (i) => i.event.envelope.id }),
    seq: t.int({ resolve: (i) => i.event.seq }),
    type: t.field({ type: EventTypeEnum, resolve: (i) => i.event.type as EventType }),
    tenantId: t.string({ resolve: (i) => i.event.envelope.tenantId }),
    discussionId: t.string({ resolve: (i) => i.event.envelope.discussionId }),
    occurredAt: t.field({ type: "DateTime", resolve: (i) => i.event.envelope.occurredAt }),
    data: t.field({
      type: "JSON",
      description: "The envelope's data as JSON, exactly as SSE and webhooks carry it.",
      resolve: (i) => i.event.envelope.data,
    }),
    payload: t.field({ type: EventPayload, description: "The same data, typed.", resolve: (i) => i }),
  }),
});

export const StreamConnectionTimeout = builder.objectRef<Timeout>("StreamConnectionTimeout").implement({
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
