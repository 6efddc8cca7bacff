// GraphQL of recent comments (contract section 19): `recentComments`, the latest visible comments
// across the tenant with their discussion's title and url (any key, publishable included; REST:
// GET /api/v1/comments/recent runs it).
import { builder } from "../../graphql/builder.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import { CommentType } from "../comments/graphql.js";
import { listRecentComments, MAX_RECENT_DISCUSSIONS, type RecentComment } from "./recent.js";

const RecentCommentType = builder.objectRef<RecentComment>("RecentComment").implement({
  description: "A visible comment with the discussion it is in, as a recent-comments list shows it.",
  fields: (t) => ({
    comment: t.field({ type: CommentType, resolve: (r) => r.comment }),
    discussionTitle: t.exposeString("discussionTitle", { nullable: true }),
    discussionUrl: t.exposeString("discussionUrl", { nullable: true }),
  }),
});

const RecentCommentConnection = defineConnection("RecentComment", RecentCommentType);

builder.queryField("recentComments", (t) =>
  t.connection(
    {
      type: RecentCommentType,
      description: "The latest visible (approved) comments of the tenant, newest published first. Any key, publishable included.",
      authScopes: { browser: true },
      args: {
        discussionIds: t.arg.stringList({ description: `Only these discussions (1..${MAX_RECENT_DISCUSSIONS}).` }),
        ...legacyPageArgs(t.arg),
      },
      resolve: (_root, args, ctx) =>
        connectionPage(args, (page) => listRecentComments(ctx, { discussionIds: args.discussionIds, ...page })),
    },
    RecentCommentConnection,
  ),
);
