// The fediverse's REST route: POST /api/v1/discussions/{id}/federate (manage_settings) → 202
// {"discussionId","articleId","followers"}: the announcement is queued (./federate.ts).
import { route } from "../../http/rest/router.js";
import { RestFederateDiscussionDocument } from "../../generated/operations.js";

export const federationRoutes = [
  route({
    method: "POST",
    path: "/discussions/:id/federate",
    document: RestFederateDiscussionDocument,
    variables: ({ params }) => ({ id: params.id ?? "" }),
    paramVars: ["id"],
    respond: (d) => d.federateDiscussion,
    status: 202,
  }),
];
