// REST routes of moderation (contract section 4): POST /comments/:id/{approve,reject,pin,unpin}.
import { route } from "../../http/rest/router.js";
import {
  RestApproveCommentDocument,
  RestPinCommentDocument,
  RestRejectCommentDocument,
  RestUnpinCommentDocument,
} from "../../generated/operations.js";
import { byId, restComment } from "../comments/routes.js";

export const moderationRoutes = (
  [
    ["approve", RestApproveCommentDocument, "approveComment"],
    ["reject", RestRejectCommentDocument, "rejectComment"],
    ["pin", RestPinCommentDocument, "pinComment"],
    ["unpin", RestUnpinCommentDocument, "unpinComment"],
  ] as const
).map(([action, document, field]) =>
  route({
    method: "POST",
    path: `/comments/:id/${action}`,
    document: document as typeof RestApproveCommentDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: (d) => restComment((d as unknown as Record<string, { moderationReason?: unknown }>)[field]!),
  }),
);
