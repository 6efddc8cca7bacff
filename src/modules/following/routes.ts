// Following a discussion over REST (contract section 19), with the reader's identity and any key:
// GET /api/v1/discussions/{id}/subscription → {"mode"}; PUT the same {"mode": "all|replies|off"} → 200 {"mode"}.
import { bodyObject, route } from "../../http/rest/router.js";
import { RestMySubscriptionDocument, RestSetMySubscriptionDocument } from "../../generated/operations.js";

export const followingRoutes = [
  route({
    method: "GET",
    path: "/discussions/:id/subscription",
    identity: "required",
    document: RestMySubscriptionDocument,
    variables: ({ params }) => ({ discussionId: params.id ?? "" }),
    paramVars: ["discussionId"],
    respond: (d) => d.mySubscription,
  }),
  route({
    method: "PUT",
    path: "/discussions/:id/subscription",
    identity: "required",
    document: RestSetMySubscriptionDocument,
    variables: ({ params, body }) => ({ discussionId: params.id ?? "", input: bodyObject(body, ["mode"]) }),
    paramVars: ["discussionId"],
    status: 200,
    respond: (d) => d.setMySubscription,
  }),
];
