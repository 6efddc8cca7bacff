import { bodyObject, route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import {
  RestArchiveDiscussionDocument,
  RestDiscussionCountsDocument,
  RestGetDiscussionDocument,
  RestListDiscussionsDocument,
  RestLockDiscussionDocument,
  RestUnlockDiscussionDocument,
  RestUpsertDiscussionDocument,
} from "../../generated/operations.js";

const byId = (p: Record<string, string>) => ({ id: p.id ?? "" });

/** How long browsers and shared caches may reuse a counts answer (then they revalidate with its ETag). */
export const COUNTS_MAX_AGE_SECONDS = 30;

export const discussionRoutes = [
  // before /discussions/:id (a static segment wins in the router anyway)
  route({
    method: "GET",
    path: "/discussions/counts",
    document: RestDiscussionCountsDocument,
    variables: ({ query }) => ({ ids: (str(query, "ids") ?? "").split(",").filter((id) => id !== "") }),
    paramVars: ["ids"],
    respond: (d) => ({ counts: Object.fromEntries(d.discussionCounts.map((c) => [c.discussionId, c.comments])) }),
    response: (s) => s.object({ counts: s.map(s.at("discussionCounts.comments")) }),
    cache: { maxAgeSeconds: COUNTS_MAX_AGE_SECONDS },
  }),
  route({
    method: "PUT",
    path: "/discussions/:id",
    document: RestUpsertDiscussionDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) }),
    paramVars: ["id"],
    respond: (d) => d.upsertDiscussion.discussion,
    response: (s) => s.at("upsertDiscussion.discussion"),
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
