// GraphQL for reactions: the toggle mutation (publisher route: any key, plus the reader's identity).
import { builder } from "../../graphql/builder.js";
import { toggleReaction, type ReactionToggle } from "./reactions.js";

const ReactionToggleType = builder.objectRef<ReactionToggle>("ReactionToggle").implement({
  description: "The outcome of a toggle: whether the reader's reaction of this kind is now active, and the comment's counts.",
  fields: (t) => ({
    commentId: t.exposeString("commentId"),
    readerId: t.exposeString("readerId"),
    kind: t.exposeString("kind"),
    active: t.exposeBoolean("active"),
    counts: t.field({ type: "JSON", resolve: (r) => r.counts }),
  }),
});

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
