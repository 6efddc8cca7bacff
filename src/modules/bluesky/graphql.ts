// Bluesky's GraphQL side (contract section 30): a discussion's `bluesky` link (its post's URI and
// where a browser opens it: readable as the discussion is), postDiscussionToBluesky and blueskyLinks
// (manage_settings: the console's Bluesky screen). Linking by URI is the discussion's PUT
// (src/modules/discussions/discussions.ts, `bluesky` of its input).
import { builder } from "../../graphql/builder.js";
import { DiscussionType } from "../discussions/graphql.js";
import { blueskyPostOf, listBlueskyLinks, postDiscussion, type BlueskyLinkView } from "./links.js";

const BlueskyPostType = builder.objectRef<{ uri: string; url: string | null }>("BlueskyPost").implement({
  description: "The Bluesky post a discussion is linked to: its replies come in as comments of kind bluesky (contract section 30).",
  fields: (t) => ({
    uri: t.exposeString("uri", { description: "The post's at:// URI (at://<did>/app.bsky.feed.post/<key>)." }),
    url: t.exposeString("url", { nullable: true, description: "Where a browser opens it: https://bsky.app/profile/<did>/post/<key>." }),
  }),
});

builder.objectField(DiscussionType, "bluesky", (t) =>
  t.field({
    type: BlueskyPostType,
    nullable: true,
    description:
      "The Bluesky post the discussion is linked to; null when it has none (or while autoPost has not posted it yet, or while settings bluesky.enabled is off).",
    resolve: (d, _a, ctx) => blueskyPostOf(ctx, d.id),
  }),
);

const BlueskyLinkType = builder.objectRef<BlueskyLinkView>("BlueskyLink").implement({
  description: "A discussion's link to a Bluesky post, and how reading its replies goes.",
  fields: (t) => ({
    discussionId: t.exposeString("discussionId"),
    uri: t.exposeString("uri", { nullable: true, description: "The post's at:// URI; null while autoPost has not posted it yet." }),
    url: t.exposeString("url", { nullable: true, description: "Where a browser opens the post." }),
    posted: t.exposeBoolean("posted", { description: "Posted from the site's account (not linked to a post that was there)." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    polledAt: t.expose("polledAt", { type: "DateTime", nullable: true, description: "When its thread was last read." }),
    nextPollAt: t.expose("nextPollAt", { type: "DateTime", description: "When its thread is read next." }),
    lastError: t.exposeString("lastError", {
      nullable: true,
      description: "Why the last read (or post) failed; null after one that worked. Failed reads are tried again with a backoff.",
    }),
    replies: t.exposeInt("replies", { description: "Replies brought in as comments." }),
  }),
});

const PostedToBlueskyType = builder.objectRef<{ created: boolean; link: BlueskyLinkView }>("PostedToBluesky").implement({
  fields: (t) => ({
    created: t.exposeBoolean("created", { description: "A post was made now (false: the discussion had one, answered as it is)." }),
    link: t.field({ type: BlueskyLinkType, resolve: (p) => p.link }),
  }),
});

builder.mutationField("postDiscussionToBluesky", (t) =>
  t.field({
    type: PostedToBlueskyType,
    description:
      "Posts the discussion from the site's Bluesky account (its title, its page as an external embed card) and links it (contract section 30). 409 bluesky_disabled, 409 bluesky_account_missing, 422 on url without a url, 502 bluesky_unreachable.",
    authScopes: { capability: "manage_settings" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_r, { id }, ctx) => postDiscussion(ctx, id),
  }),
);

builder.queryField("blueskyLinks", (t) =>
  t.field({
    type: [BlueskyLinkType],
    description: "The site's discussions linked to Bluesky posts, newest first (at most `limit`, 1–200, default 50).",
    authScopes: { capability: "manage_settings" },
    args: { limit: t.arg.int({ required: false, description: "Links to list, 1–200 (default 50)." }) },
    resolve: (_r, { limit }, ctx) => listBlueskyLinks(ctx, limit ?? 50),
  }),
);
