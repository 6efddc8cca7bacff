// GraphQL for votes (contract section 18): the vote mutation (publisher route: any key, plus the
// reader's identity) and the comment's score, upvotes, downvotes and the reader's own vote.
import { builder } from "../../graphql/builder.js";
import { CommentType } from "../comments/graphql.js";
import { getComment } from "../comments/read.js";
import { vote, type VoteResult } from "./votes.js";
import { myVote } from "./viewer.js";

export const VoteResultType = builder.objectRef<VoteResult>("VoteResult").implement({
  description: "The reader's vote as it now stands and the comment's tallies.",
  fields: (t) => ({
    commentId: t.exposeString("commentId"),
    readerId: t.exposeString("readerId"),
    kind: t.exposeString("kind", { description: 'Always "vote" (the kind its reaction_toggled event carries).' }),
    value: t.exposeInt("value", { description: "1, -1, or 0: no vote." }),
    score: t.exposeInt("score", { description: "upvotes − downvotes." }),
    upvotes: t.exposeInt("upvotes"),
    downvotes: t.exposeInt("downvotes"),
    comment: t.field({
      type: CommentType,
      description: "The comment as it is now: select it so normalised client caches update themselves.",
      resolve: (r, _a, ctx) => getComment(ctx, r.commentId),
    }),
  }),
});

builder.objectField(CommentType, "myVote", (t) =>
  t.int({
    nullable: true,
    description: "The vote of the reader of X-Service-Identity on this comment: 1, -1, or 0 for none; null without an assertion.",
    resolve: (c, _a, ctx) => myVote(ctx, c),
  }),
);

const VoteInput = builder.inputType("VoteInput", {
  fields: (t) => ({
    value: t.int({ required: false, description: '1 (up), -1 (down, only with settings votes "updown") or 0 (take the vote back).' }),
  }),
});

builder.mutationField("vote", (t) =>
  t.field({
    type: VoteResultType,
    description: "Votes as the reader of X-Service-Identity (settings votes: 409 votes_disabled when off).",
    authScopes: { browser: true },
    args: { commentId: t.arg.string({ required: true }), input: t.arg({ type: VoteInput, required: true }) },
    resolve: (_root, { commentId, input }, ctx) => vote(ctx, commentId, input),
  }),
);
