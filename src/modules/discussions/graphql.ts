import { builder } from "../../graphql/builder.js";
import { DiscussionState as DiscussionStates } from "../../generated/prisma/enums.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import { errors } from "../../lib/errors.js";
import {
  changeDiscussionState,
  discussionCounts,
  getDiscussion,
  getDiscussionByUrl,
  listDiscussions,
  upsertDiscussion,
} from "./discussions.js";

export const DiscussionState = builder.enumType("DiscussionState", { values: Object.values(DiscussionStates) });

const DiscussionCounts = builder.objectRef<{ comments: number }>("DiscussionCounts").implement({
  fields: (t) => ({ comments: t.exposeInt("comments") }),
});

export const DiscussionType = builder.prismaObject("Discussion", {
  interfaces: [builder.nodeInterfaceRef()],
  fields: (t) => ({
    id: t.exposeID("id"),
    title: t.exposeString("title", { nullable: true }),
    url: t.exposeString("url", { nullable: true }),
    state: t.expose("state", { type: DiscussionState }),
    commentCount: t.exposeInt("commentCount"),
    seq: t.exposeInt("seq", {
      description:
        "The seq of the discussion's latest event when it was read (its stream's SSE ids): the stream's events after it are what this read does not show.",
    }),
    counts: t.field({ type: DiscussionCounts, resolve: (d) => ({ comments: d.commentCount }) }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const DiscussionConnection = defineConnection("Discussion", DiscussionType);

const DiscussionInput = builder.inputType("DiscussionInput", {
  fields: (t) => ({
    title: t.string({ required: false }),
    url: t.string({ required: false }),
    bluesky: t.string({
      required: false,
      description:
        "Links the discussion to a Bluesky post (an at:// URI or a https://bsky.app/profile/…/post/… URL; its replies come in as comments, contract section 30); null unlinks. Needs settings bluesky.enabled and the discussion's url.",
    }),
  }),
});

const UpsertDiscussionPayload = builder
  .objectRef<{ created: boolean; discussion: Awaited<ReturnType<typeof getDiscussion>> }>("UpsertDiscussionPayload")
  .implement({
    fields: (t) => ({
      created: t.exposeBoolean("created"),
      discussion: t.field({ type: DiscussionType, resolve: (p) => p.discussion }),
    }),
  });

const DiscussionCommentCount = builder
  .objectRef<{ discussionId: string; comments: number; reading: number | null }>("DiscussionCommentCount")
  .implement({
    description: "Visible (approved, not deleted) comments of a discussion; 0 for an unknown id.",
    fields: (t) => ({
      discussionId: t.exposeString("discussionId"),
      comments: t.exposeInt("comments"),
      reading: t.exposeInt("reading", {
        nullable: true,
        description: "Open streams of the discussion on every instance (presence); null unless asked with `presence: true`.",
      }),
    }),
  });

builder.queryFields((t) => ({
  discussionCounts: t.field({
    type: [DiscussionCommentCount],
    description: "Comment counts of 1–100 discussions in one request (article teasers), in the order asked.",
    authScopes: { browser: true },
    args: {
      ids: t.arg.stringList({ required: true }),
      presence: t.arg.boolean({ required: false, description: "Also count the readers (open streams) of each discussion." }),
    },
    resolve: (_r, { ids, presence }, ctx) => discussionCounts(ctx, ids, { presence: presence === true }),
  }),
  discussion: t.field({
    type: DiscussionType,
    description:
      "A discussion, by its id or by its page's url (give one): the discussion whose url is that page's, compared normalized (scheme and host lower-cased; default port, fragment and a trailing slash past the root ignored; the query kept).",
    authScopes: { browser: true },
    args: {
      id: t.arg.string({ required: false }),
      url: t.arg.string({ required: false, description: "An absolute http(s) URL: the page whose discussion it is." }),
    },
    resolve: (_r, { id, url }, ctx) => {
      if (id != null && url != null) throw errors.validation([{ path: "url", message: "give either id or url, not both" }]);
      return id != null ? getDiscussion(ctx, id) : getDiscussionByUrl(ctx, url ?? "");
    },
  }),
  discussions: t.connection(
    {
      type: DiscussionType,
      authScopes: { browser: true },
      args: legacyPageArgs(t.arg),
      resolve: (_r, args, ctx) => connectionPage(args, (page) => listDiscussions(ctx, page)),
    },
    DiscussionConnection,
  ),
}));

const stateMutation = (action: "lock" | "unlock" | "archive") =>
  builder.mutationField(`${action}Discussion`, (t) =>
    t.field({
      type: DiscussionType,
      authScopes: { capability: "moderate_content" },
      args: { id: t.arg.string({ required: true }) },
      resolve: (_r, { id }, ctx) => changeDiscussionState(ctx, id, action),
    }),
  );
stateMutation("lock");
stateMutation("unlock");
stateMutation("archive");

builder.mutationField("upsertDiscussion", (t) =>
  t.field({
    type: UpsertDiscussionPayload,
    authScopes: { authenticated: true },
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: DiscussionInput }) },
    resolve: (_r, { id, input }, ctx) => upsertDiscussion(ctx, id, input ?? {}),
  }),
);
