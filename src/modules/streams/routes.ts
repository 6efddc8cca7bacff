// POST /api/v1/stream/ticket {"discussionId"} or {"scope": "me"} → 201 {"ticket","expiresAt"} (the streams
// themselves: src/modules/streams/sse-route.ts).
import { bodyObject, route } from "../../http/rest/router.js";
import { RestCreateStreamTicketDocument } from "../../generated/operations.js";

export const streamTicketRoutes = [
  route({
    method: "POST",
    path: "/stream/ticket",
    identity: "optional",
    document: RestCreateStreamTicketDocument,
    variables: ({ body }) => {
      const b = bodyObject(body, ["discussionId", "scope"]);
      return { discussionId: b.discussionId as string | undefined, scope: b.scope as string | undefined };
    },
    body: ["discussionId", "scope"],
    respond: (d) => d.createStreamTicket,
    status: 201,
  }),
];
