// Bluesky's REST routes (contract section 30; manage_settings): POST /api/v1/discussions/{id}/bluesky
// posts the discussion from the site's account and links it (201; 200 with the link it has when it
// was posted or linked before); GET /api/v1/bluesky/links lists the linked discussions.
import { route } from "../../http/rest/router.js";
import { int } from "../../http/rest/params.js";
import { RestBlueskyLinksDocument, RestPostDiscussionToBlueskyDocument } from "../../generated/operations.js";

export const blueskyRoutes = [
  route({
    method: "POST",
    path: "/discussions/:id/bluesky",
    document: RestPostDiscussionToBlueskyDocument,
    variables: ({ params }) => ({ id: params.id ?? "" }),
    paramVars: ["id"],
    respond: (d) => d.postDiscussionToBluesky.link,
    response: (s) => s.at("postDiscussionToBluesky.link"),
    status: (d) => (d.postDiscussionToBluesky.created ? 201 : 200),
  }),
  route({
    method: "GET",
    path: "/bluesky/links",
    document: RestBlueskyLinksDocument,
    variables: ({ query }) => ({ limit: int(query, "limit") ?? null }),
    paramVars: ["limit"],
    respond: (d) => ({ items: d.blueskyLinks }),
    response: (s) => s.object({ items: s.at("blueskyLinks") }),
  }),
];
