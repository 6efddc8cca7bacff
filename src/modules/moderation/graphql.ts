// GraphQL for moderation: approve, reject, pin and unpin a comment (moderate_content).
import { builder } from "../../graphql/builder.js";
import { CommentType } from "../comments/graphql.js";
import { setCommentPinned, setCommentStatus } from "./moderation.js";

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
