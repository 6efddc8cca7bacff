// `itemsJson` on a page of comments: the page's comments as REST answers them (answer.ts), one JSON
// value each; `answerJson` on a comment: that one comment so. REST's comment lists select the first
// (src/modules/comments/operations.graphql: a discussion's comments, the moderation queue, search), a
// post's, an edit's and a read's answer the second, where they selected each member of each comment:
// a page of 20 was 260 resolver calls and as many values copied into GraphQL's result, then copied
// again to leave out the members a caller does not get (docs/choices.md, "REST's comment lists").
import { builder } from "../../graphql/builder.js";
import type { ConnectionShape } from "../../graphql/page.js";
import { CommentConnection, CommentType } from "../comments/graphql.js";
import type { CommentWithAuthor } from "../comments/dto.js";
import { answeredComment, answeredComments } from "./answer.js";

builder.objectField(CommentConnection, "itemsJson", (t) =>
  t.field({
    type: "JSON",
    description:
      "The page's comments as REST answers them, in order: each the JSON object events carry as data.comment (the members of " +
      "`items`, in REST's order, `reactions` a map), with `myVote` when the request asserts a reader and `moderationReason` for " +
      "moderate_content when there is one. For clients that want the plain shape without selecting each member.",
    resolve: (c, _a, ctx) =>
      answeredComments(
        ctx,
        (c as unknown as ConnectionShape<CommentWithAuthor>).edges.map((e) => e.node),
      ),
  }),
);

builder.objectField(CommentType, "answerJson", (t) =>
  t.field({
    type: "JSON",
    description:
      "The comment as REST answers it: the JSON object events carry as data.comment (the members of the comment, in REST's order, " +
      "`reactions` a map), with `myVote` when the request asserts a reader and `moderationReason` for moderate_content when there " +
      "is one. For clients that want the plain shape without selecting each member.",
    resolve: (c, _a, ctx) => answeredComment(ctx, c),
  }),
);
