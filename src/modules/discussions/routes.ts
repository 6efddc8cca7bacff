import { bodyObject, route } from "../../http/rest/router.js";
import { bool, int, str, type Query } from "../../http/rest/params.js";
import {
  RestArchiveDiscussionDocument,
  RestDiscussionCountsDocument,
  RestGetDiscussionDocument,
  RestListDiscussionsDocument,
  RestLookupDiscussionDocument,
  RestLockDiscussionDocument,
  RestUnlockDiscussionDocument,
  RestToggleDiscussionReactionDocument,
  RestUpsertDiscussionDocument,
} from "../../generated/operations.js";

const byId = (p: Record<string, string>) => ({ id: p.id ?? "" });

/** A discussion as REST answers it: `myReactions` only with the reader's identity (GraphQL's null without one). */
export function restDiscussion<T extends { myReactions?: unknown }>(d: T): Omit<T, "myReactions"> | T {
  if (d.myReactions !== null && d.myReactions !== undefined) return d;
  const { myReactions: _, ...rest } = d;
  return rest;
}

/** How long browsers and shared caches may reuse a counts answer (then they revalidate with its ETag). */
export const COUNTS_MAX_AGE_SECONDS = 30;
/** …and one with `presence=true`: no longer than presence events are apart (the interval, 5 s). */
export const PRESENCE_COUNTS_MAX_AGE_SECONDS = 5;

const withPresence = (query: Query) => bool(query, "presence") === true;

export const discussionRoutes = [
  // before /discussions/:id (a static segment wins in the router anyway)
  route({
    method: "GET",
    path: "/discussions/counts",
    document: RestDiscussionCountsDocument,
    variables: ({ query }) => ({
      ids: (str(query, "ids") ?? "").split(",").filter((id) => id !== ""),
      presence: withPresence(query),
    }),
    paramVars: ["ids", "presence"],
    // `reading` (contract section 19) only when asked: without presence=true the answer is as before
    respond: (d) => ({
      counts: Object.fromEntries(d.discussionCounts.map((c) => [c.discussionId, c.comments])),
      ...(d.discussionCounts.some((c) => c.reading !== null)
        ? { reading: Object.fromEntries(d.discussionCounts.map((c) => [c.discussionId, c.reading ?? 0])) }
        : {}),
    }),
    response: (s) =>
      s.object({ counts: s.map(s.at("discussionCounts.comments")), reading: s.map(s.at("discussionCounts.comments")) }, ["reading"]),
    cache: { maxAgeSeconds: (query) => (withPresence(query) ? PRESENCE_COUNTS_MAX_AGE_SECONDS : COUNTS_MAX_AGE_SECONDS) },
  }),
  // a page's discussion by its url (contract section 27); before /discussions/:id, as counts
  route({
    method: "GET",
    path: "/discussions/lookup",
    identity: "optional",
    document: RestLookupDiscussionDocument,
    variables: ({ query }) => ({ url: str(query, "url") ?? "" }),
    paramVars: ["url"],
    respond: (d) => restDiscussion(d.discussion),
  }),
  route({
    method: "PUT",
    path: "/discussions/:id",
    document: RestUpsertDiscussionDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) }),
    paramVars: ["id"],
    respond: (d) => restDiscussion(d.upsertDiscussion.discussion),
    response: (s) => s.at("upsertDiscussion.discussion"),
    status: (d) => (d.upsertDiscussion.created ? 201 : 200),
  }),
  route({
    method: "GET",
    path: "/discussions/:id",
    identity: "optional",
    document: RestGetDiscussionDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: (d) => restDiscussion(d.discussion),
  }),
  route({
    method: "GET",
    path: "/discussions",
    identity: "optional",
    document: RestListDiscussionsDocument,
    variables: ({ query }) => ({ limit: int(query, "limit"), cursor: str(query, "cursor") }),
    paramVars: ["limit", "cursor"],
    respond: (d) => ({ ...d.discussions, items: d.discussions.items.map(restDiscussion) }),
  }),
  route({
    method: "POST",
    path: "/discussions/:id/reactions",
    identity: "required",
    document: RestToggleDiscussionReactionDocument,
    claimInWrite: true,
    variables: ({ params, body }) => ({ discussionId: params.id ?? "", input: bodyObject(body) }),
    paramVars: ["discussionId"],
    respond: (d) => d.toggleDiscussionReaction,
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
      respond: (d) => restDiscussion((d as unknown as Record<string, { myReactions?: unknown }>)[field]!),
    }),
  ),
];
