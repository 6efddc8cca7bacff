// GraphQL for reactions, on comments and on discussions (page reactions): the toggle mutations
// (publisher routes: any key, plus the reader's identity) and the reader's own reactions.
import { builder } from "../../graphql/builder.js";
import { CommentType, ReactionCountType, reactionCountList } from "../comments/graphql.js";
import { getComment } from "../comments/read.js";
import { toggleReaction, type ReactionToggle } from "./reactions.js";
import { viewerReactions } from "./viewer.js";
import { DiscussionType } from "../discussions/graphql.js";
import { getDiscussion } from "../discussions/discussions.js";
import { reactionCountsOf } from "../comments/dto.js";
import { myPageReactions, toggleDiscussionReaction, type DiscussionReactionToggle } from "./page-reactions.js";

export const ReactionToggleType = builder.objectRef<ReactionToggle>("ReactionToggle").implement({
  description: "The outcome of a toggle: whether the reader's reaction of this kind is now active, the counts, and the comment.",
  fields: (t) => ({
    commentId: t.exposeString("commentId"),
    readerId: t.exposeString("readerId"),
    kind: t.exposeString("kind"),
    active: t.exposeBoolean("active"),
    counts: t.field({ type: [ReactionCountType], resolve: (r) => reactionCountList(r.counts) }),
    countMap: t.field({
      type: "JSON",
      description: 'The counts as a map, e.g. {"like": 3}: the shape REST and events use.',
      resolve: (r) => r.counts,
    }),
    comment: t.field({
      type: CommentType,
      description: "The comment as it is now: select it so normalised client caches update themselves.",
      resolve: (r, _a, ctx) => getComment(ctx, r.commentId),
    }),
  }),
});

builder.objectField(CommentType, "viewerReactions", (t) =>
  t.field({
    type: ["String"],
    description: "The kinds the reader of X-Service-Identity reacted with on this comment (empty without an assertion).",
    resolve: (c, _a, ctx) => viewerReactions(ctx, c.id),
  }),
);

const ToggleReactionInput = builder.inputType("ToggleReactionInput", {
  fields: (t) => ({ kind: t.string({ required: false, description: "One of the tenant's reactionKinds." }) }),
});

builder.mutationField("toggleReaction", (t) =>
  t.field({
    type: ReactionToggleType,
    authScopes: { browser: true },
    args: { commentId: t.arg.string({ required: true }), input: t.arg({ type: ToggleReactionInput, required: true }) },
    resolve: (_root, { commentId, input }, ctx) => toggleReaction(ctx, commentId, input),
  }),
);

// Page reactions (contract section 18): on the discussion itself.

export const DiscussionReactionToggleType = builder.objectRef<DiscussionReactionToggle>("DiscussionReactionToggle").implement({
  description:
    "The outcome of a page reaction's toggle: whether the reader's reaction of this kind is now active, the counts, and the discussion.",
  fields: (t) => ({
    discussionId: t.exposeString("discussionId"),
    readerId: t.exposeString("readerId"),
    kind: t.exposeString("kind"),
    active: t.exposeBoolean("active"),
    counts: t.field({ type: [ReactionCountType], resolve: (r) => reactionCountList(r.counts) }),
    countMap: t.field({
      type: "JSON",
      description: 'The counts as a map, e.g. {"like": 3}: the shape REST and events use.',
      resolve: (r) => r.counts,
    }),
    discussion: t.field({
      type: DiscussionType,
      description: "The discussion as it is now: select it so normalised client caches update themselves.",
      resolve: (r, _a, ctx) => getDiscussion(ctx, r.discussionId),
    }),
  }),
});

builder.objectFields(DiscussionType, (t) => ({
  reactions: t.field({
    type: [ReactionCountType],
    description: "Page reaction counts by kind (kinds with at least one reaction), most first.",
    resolve: (d) => reactionCountList(reactionCountsOf(d)),
  }),
  reactionMap: t.field({
    type: "JSON",
    description: 'Page reaction counts as a map, e.g. {"like": 3}: the shape REST and events use.',
    resolve: (d) => reactionCountsOf(d),
  }),
  myReactions: t.field({
    type: ["String"],
    nullable: true,
    description: "The kinds the reader of X-Service-Identity reacted with on this discussion; null without an assertion.",
    resolve: (d, _a, ctx) => myPageReactions(ctx, d.id),
  }),
}));

const ToggleDiscussionReactionInput = builder.inputType("ToggleDiscussionReactionInput", {
  fields: (t) => ({ kind: t.string({ required: false, description: "One of the tenant's pageReactionKinds." }) }),
});

builder.mutationField("toggleDiscussionReaction", (t) =>
  t.field({
    type: DiscussionReactionToggleType,
    description: "Toggles the reader's page reaction of a kind (409 page_reactions_disabled while pageReactionKinds is empty).",
    authScopes: { browser: true },
    args: { discussionId: t.arg.string({ required: true }), input: t.arg({ type: ToggleDiscussionReactionInput, required: true }) },
    resolve: (_root, { discussionId, input }, ctx) => toggleDiscussionReaction(ctx, discussionId, input),
  }),
);
