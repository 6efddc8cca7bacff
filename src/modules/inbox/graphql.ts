// GraphQL of the reader's inbox (contract section 19): `myInbox` (a connection with `unreadCount`) and
// `markInboxRead` (and `inboxUnreadCount`, the count alone), for the reader of X-Service-Identity (any key, publishable included; REST: GET
// /api/v1/me/inbox and POST /api/v1/me/inbox/read run them).
import { builder } from "../../graphql/builder.js";
import { connectionPage, legacyPageArgs, type ConnectionShape } from "../../graphql/page.js";
import { InboxItemType as InboxItemTypes } from "../../generated/prisma/enums.js";
import { CommentType } from "../comments/graphql.js";
import { listMyInbox, markMyInboxRead, myInboxUnreadCount, MAX_MARK_IDS, type InboxItem } from "./inbox.js";

const InboxItemTypeEnum = builder.enumType("InboxItemType", { values: Object.values(InboxItemTypes) });

export const InboxItemObject = builder.objectRef<InboxItem>("InboxItem").implement({
  description: "An item of a reader's inbox: a reply to them, or a new comment in a discussion they follow.",
  fields: (t) => ({
    id: t.exposeString("id"),
    type: t.expose("type", { type: InboxItemTypeEnum }),
    discussionId: t.exposeString("discussionId"),
    discussionTitle: t.exposeString("discussionTitle", { nullable: true }),
    discussionUrl: t.exposeString("discussionUrl", {
      nullable: true,
      description: "The discussion's address (its url), where `#comment-<id>` opens the comment; null when it has none.",
    }),
    comment: t.field({ type: CommentType, resolve: (i) => i.comment }),
    parent: t.field({ type: CommentType, nullable: true, description: "The comment replied to (replies).", resolve: (i) => i.parent }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    readAt: t.expose("readAt", { type: "DateTime", nullable: true }),
  }),
});

type InboxConnectionShape = ConnectionShape<InboxItem> & { unreadCount: number };

const InboxConnection = builder.connectionObject(
  {
    type: InboxItemObject,
    name: "InboxItemConnection",
    fields: (t) => ({
      unreadCount: t.int({
        description: "The reader's unread items, whatever the page.",
        resolve: (c) => (c as unknown as InboxConnectionShape).unreadCount,
      }),
      items: t.field({
        type: [InboxItemObject],
        deprecationReason: "Use edges { node }.",
        resolve: (c) => (c as unknown as InboxConnectionShape).edges.map((e) => e.node),
      }),
      nextCursor: t.string({
        nullable: true,
        deprecationReason: "Use pageInfo { hasNextPage endCursor }.",
        resolve: (c) => {
          const { pageInfo } = c as unknown as InboxConnectionShape;
          return pageInfo.hasNextPage ? pageInfo.endCursor : null;
        },
      }),
    }),
  },
  { name: "InboxItemEdge" },
);

builder.queryField("myInbox", (t) =>
  t.connection(
    {
      type: InboxItemObject,
      description: "The inbox of the reader of X-Service-Identity, newest first. Any key, publishable included.",
      authScopes: { browser: true },
      args: { unread: t.arg.boolean({ description: "Only the items not read yet." }), ...legacyPageArgs(t.arg) },
      resolve: async (_root, args, ctx) => {
        let unreadCount = 0;
        const connection = await connectionPage(args, async (page) => {
          const inbox = await listMyInbox(ctx, { unread: args.unread, ...page });
          unreadCount = inbox.unreadCount;
          return inbox;
        });
        return { ...connection, unreadCount };
      },
    },
    InboxConnection,
  ),
);

builder.queryField("inboxUnreadCount", (t) =>
  t.int({
    description: "How many unread items the inbox of the reader of X-Service-Identity holds (as myInbox's unreadCount).",
    authScopes: { browser: true },
    resolve: (_r, _a, ctx) => myInboxUnreadCount(ctx),
  }),
);

const MarkInboxReadInput = builder.inputType("MarkInboxReadInput", {
  fields: (t) => ({
    ids: t.stringList({ description: `The items to mark read (1..${MAX_MARK_IDS}); or` }),
    all: t.boolean({ description: "true: every item." }),
  }),
});

const MarkInboxReadPayload = builder.objectRef<{ unreadCount: number }>("MarkInboxReadPayload").implement({
  fields: (t) => ({ unreadCount: t.exposeInt("unreadCount") }),
});

builder.mutationField("markInboxRead", (t) =>
  t.field({
    type: MarkInboxReadPayload,
    description: "The reader of X-Service-Identity marks inbox items (or all of them) read.",
    authScopes: { browser: true },
    args: { input: t.arg({ type: MarkInboxReadInput, required: true }) },
    resolve: (_r, { input }, ctx) => markMyInboxRead(ctx, input),
  }),
);
