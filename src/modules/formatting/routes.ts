// POST /api/v1/preview {"body"} → 200 {"bodyHtml","links"}: a body rendered as a comment would show it (contract section 18).
import { bodyObject, route } from "../../http/rest/router.js";
import { RestPreviewDocument } from "../../generated/operations.js";

export const formattingRoutes = [
  route({
    method: "POST",
    path: "/preview",
    identity: "optional",
    document: RestPreviewDocument,
    variables: ({ body }) => ({ body: bodyObject(body, ["body"]).body as string }),
    body: ["body"],
    respond: (d) => d.preview,
  }),
];
