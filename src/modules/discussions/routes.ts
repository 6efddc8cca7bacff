import { bodyObject, route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import {
  RestArchiveDiscussionDocument,
  RestGetDiscussionDocument,
  RestListDiscussionsDocument,
  RestLockDiscussionDocument,
  RestUnlockDiscussionDocument,
  RestUpsertDiscussionDocument,
} from "../../generated/operations.js";

const byId = (p: Record<string, string>) => ({ id: p.id ?? "" });

export const discussionRoutes = [
  route({
    method: "PUT",
    path: "/discussions/:id",
    document: RestUpsertDiscussionDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) }),
    paramVars: ["id"],
    respond: (d) => d.upsertDiscussion.discussion,
    status: (d) => (d.upsertDiscussion.created ? 201 : 200),
  }),
  route({
    method: "GET",
    path: "/discussions/:id",
    document: RestGetDiscussionDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: (d) => d.discussion,
  }),
  route({
    method: "GET",
    path: "/discussions",
    document: RestListDiscussionsDocument,
    variables: ({ query }) => ({ limit: int(query, "limit"), cursor: str(query, "cursor") }),
    paramVars: ["limit", "cursor"],
    respond: (d) => d.discussions,
  }),
  ...(
    [
      ["lock", RestLockDiscussionDocument, "lockDiscussion"],
      ["unlock", RestUnlockDiscussionDocument, "unlockDiscussion"],
      ["archive", RestArchiveDiscussionDocument, "archiveDiscussion"],
    ] as const
  ).map(([action, document, field]) =>
    route({
      method: "POST",
      path: `/discussions/:id/${action}`,
      document: document as typeof RestLockDiscussionDocument,
      variables: ({ params }) => byId(params),
      paramVars: ["id"],
      respond: (d) => (d as unknown as Record<string, unknown>)[field],
    }),
  ),
];
