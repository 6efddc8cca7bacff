// POST /api/v1/stream/ticket {"discussionId"} → 201 {"ticket","expiresAt"} (the stream itself: src/modules/streams/sse-route.ts).
import { bodyObject, route } from "../../http/rest/router.js";
import { RestCreateStreamTicketDocument } from "../../generated/operations.js";

export const streamTicketRoutes = [
  route({
    method: "POST",
    path: "/stream/ticket",
    identity: "optional",
    document: RestCreateStreamTicketDocument,
    variables: ({ body }) => ({ discussionId: bodyObject(body, ["discussionId"]).discussionId as string }),
    body: ["discussionId"],
    respond: (d) => d.createStreamTicket,
    status: 201,
  }),
];
