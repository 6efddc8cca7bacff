// GraphQL for reactions: the toggle mutation (publisher route: any key, plus the reader's identity).
import { builder } from "../../graphql/builder.js";
import { CommentType, ReactionCountType, reactionCountList } from "../comments/graphql.js";
import { getComment } from "../comments/read.js";
import { toggleReaction, type ReactionToggle } from "./reactions.js";
import { viewerReactions } from "./viewer.js";

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
