// GraphQL for moderation: approve, reject, pin and unpin a comment, and how many comments are pending
// (moderate_content).
import { builder } from "../../graphql/builder.js";
import { CommentType } from "../comments/graphql.js";
import { setCommentPinned, setCommentStatus } from "./moderation.js";
import { QUEUE_COUNT_CAP, countPending } from "./queue-count.js";

builder.queryField("pendingCommentCount", (t) =>
  t.int({
    description: `How many comments wait in the moderation queue (status pending), counted up to ${QUEUE_COUNT_CAP}.`,
    authScopes: { capability: "moderate_content" },
    resolve: (_root, _args, ctx) => countPending(ctx),
  }),
);

const moderation = (name: string, run: Parameters<typeof setCommentStatus>[2] | "pin" | "unpin") =>
  builder.mutationField(name, (t) =>
    t.field({
      type: CommentType,
      authScopes: { capability: "moderate_content" },
      args: { id: t.arg.string({ required: true }) },
      resolve: (_root, { id }, ctx) =>
        run === "pin" || run === "unpin" ? setCommentPinned(ctx, id, run === "pin") : setCommentStatus(ctx, id, run),
    }),
  );
moderation("approveComment", "approved");
moderation("rejectComment", "rejected");
moderation("pinComment", "pin");
moderation("unpinComment", "unpin");
