// The fediverse's REST routes (manage_settings): POST /api/v1/discussions/{id}/federate → 202
// {"discussionId","articleId","followers"}: the announcement is queued (./federate.ts); POST
// /api/v1/federation/announce → 202 the announcement job, and GET /api/v1/federation/announce/{id} →
// its state and counts (./announce.ts); GET /api/v1/federation → the site's address and followers (./status.ts).
import { route } from "../../http/rest/router.js";
import {
  RestAnnounceDiscussionsDocument,
  RestFederateDiscussionDocument,
  RestFederationAnnouncementDocument,
  RestFederationStatusDocument,
} from "../../generated/operations.js";

export const federationRoutes = [
  route({
    method: "GET",
    path: "/federation",
    document: RestFederationStatusDocument,
    variables: () => ({}),
    respond: (d) => d.federationStatus,
  }),
  route({
    method: "POST",
    path: "/discussions/:id/federate",
    document: RestFederateDiscussionDocument,
    variables: ({ params }) => ({ id: params.id ?? "" }),
    paramVars: ["id"],
    respond: (d) => d.federateDiscussion,
    status: 202,
  }),
  route({
    method: "POST",
    path: "/federation/announce",
    document: RestAnnounceDiscussionsDocument,
    variables: () => ({}),
    respond: (d) => d.announceDiscussions,
    status: 202,
  }),
  route({
    method: "GET",
    path: "/federation/announce/:id",
    document: RestFederationAnnouncementDocument,
    variables: ({ params }) => ({ id: params.id ?? "" }),
    paramVars: ["id"],
    respond: (d) => d.federationAnnouncement,
  }),
];
