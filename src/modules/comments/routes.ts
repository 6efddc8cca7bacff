// REST routes of comments, reactions and votes (contract sections 4 and 18); moderation: src/modules/moderation/routes.ts.
import { bodyObject, route } from "../../http/rest/router.js";
import { bool, int, str } from "../../http/rest/params.js";
import type { JsonSchema, ResponseShapes } from "../../http/rest/json-schema.js";
import {
  RestCommentContextDocument,
  RestDeleteCommentDocument,
  RestEditCommentDocument,
  RestGetCommentDocument,
  RestListCommentsDocument,
  RestModerationQueueDocument,
  RestPostCommentDocument,
  RestSearchCommentsDocument,
  RestToggleReactionDocument,
  RestVoteDocument,
  type CommentListStatus,
  type ModerationQueueSort,
  type ModerationQueueStatus,
  type CommentSort,
  type CommentStatus,
} from "../../generated/operations.js";

export const byId = (p: Record<string, string>) => ({ id: p.id ?? "" });

/** The members REST leaves out of a comment when they are null (for whom they are null: see restComment). */
type Optional = "moderationReason" | "myVote";

/**
 * A comment as REST answers it: `moderationReason` only when there is one and the caller may see it
 * (moderate_content), `myVote` only with an identity, so for everyone else it is exactly the JSON
 * events carry.
 */
export function restComment<T extends { moderationReason?: unknown; myVote?: unknown }>(c: T): Omit<T, Optional> | T {
  const { moderationReason, myVote, ...rest } = c;
  return {
    ...rest,
    ...(myVote === null || myVote === undefined ? {} : { myVote }),
    ...(moderationReason === null || moderationReason === undefined ? {} : { moderationReason }),
  };
}

/**
 * The comment a post or an edit answers: the author's own, so exactly what its event carries (their
 * myVote on it is always 0, and events are the same for every reader).
 */
function restWrittenComment(c: { answerJson: unknown }) {
  const { myVote: _, ...rest } = c.answerJson as Record<string, unknown>;
  return rest;
}

/**
 * A page of comments as REST answers it: each built once as REST answers a comment
 * (`itemsJson`, src/modules/comment-answers), which the route's document selects where the
 * fragment's `items`, never run, gives the OpenAPI document their shape (docs/choices.md).
 */
const answeredPage = (page: { itemsJson: unknown; nextCursor: string | null }) => ({
  items: page.itemsJson as unknown[],
  nextCursor: page.nextCursor,
});

/**
 * The schema at `root` without its member `built` (the answer built once: itemsJson or answerJson),
 * whose shape the fragment's members, never run, give.
 */
const shapeWithout = (root: string, built: string) => (s: ResponseShapes) => {
  const at = s.at(root);
  const { [built]: _, ...properties } = at.properties as Record<string, JsonSchema>;
  return { ...at, properties, required: (at.required as string[]).filter((k) => k !== built) };
};
/** A page's schema in the OpenAPI document: the root field's page, its items the fragment's. */
const answeredPageShape = (root: string) => shapeWithout(root, "itemsJson");
/** A comment's: the fragment's members. */
const answeredCommentShape = (root: string) => shapeWithout(root, "answerJson");

export const commentRoutes = [
  route({
    method: "POST",
    path: "/discussions/:id/comments",
    identity: "required",
    readerClient: true,
    document: RestPostCommentDocument,
    claimInWrite: true,
    variables: ({ params, body }) => ({ discussionId: params.id ?? "", input: bodyObject(body) }),
    paramVars: ["discussionId"],
    response: answeredCommentShape("postComment"),
    respond: (d) => restWrittenComment(d.postComment),
    status: 201,
  }),
  route({
    method: "GET",
    path: "/discussions/:id/comments",
    document: RestListCommentsDocument,
    variables: ({ params, query }) => ({
      discussionId: params.id ?? "",
      sort: str(query, "sort") as CommentSort | undefined,
      parentId: str(query, "parentId"),
      topLevel: bool(query, "topLevel"),
      status: str(query, "status") as CommentListStatus | undefined,
      limit: int(query, "limit"),
      cursor: str(query, "cursor"),
    }),
    paramVars: ["discussionId", "sort", "parentId", "topLevel", "status", "limit", "cursor"],
    response: answeredPageShape("comments"),
    respond: (d) => answeredPage(d.comments),
  }),
  // the moderation queue across discussions (contract section 10)
  route({
    method: "GET",
    path: "/comments",
    document: RestModerationQueueDocument,
    variables: ({ query }) => ({
      status: str(query, "status") as ModerationQueueStatus | undefined,
      sort: str(query, "sort") as ModerationQueueSort | undefined,
      limit: int(query, "limit"),
      cursor: str(query, "cursor"),
    }),
    paramVars: ["status", "sort", "limit", "cursor"],
    response: answeredPageShape("moderationQueue"),
    respond: (d) => answeredPage(d.moderationQueue),
  }),
  // comment search for moderators (contract section 21)
  route({
    method: "GET",
    path: "/comments/search",
    document: RestSearchCommentsDocument,
    variables: ({ query }) => ({
      q: str(query, "q"),
      status: str(query, "status") as CommentStatus | undefined,
      discussionId: str(query, "discussionId"),
      readerId: str(query, "readerId"),
      hasLinks: bool(query, "hasLinks"),
      reported: bool(query, "reported"),
      from: str(query, "from"),
      to: str(query, "to"),
      limit: int(query, "limit"),
      cursor: str(query, "cursor"),
    }),
    paramVars: ["q", "status", "discussionId", "readerId", "hasLinks", "reported", "from", "to", "limit", "cursor"],
    response: answeredPageShape("searchComments"),
    respond: (d) => answeredPage(d.searchComments),
  }),
  route({
    method: "GET",
    path: "/comments/:id",
    identity: "optional",
    document: RestGetCommentDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    response: answeredCommentShape("comment"),
    respond: (d) => d.comment.answerJson,
  }),
  // a comment's permalink (contract section 18)
  route({
    method: "GET",
    path: "/comments/:id/context",
    identity: "optional",
    document: RestCommentContextDocument,
    variables: ({ params, query }) => ({
      ...byId(params),
      sort: str(query, "sort") as CommentSort | undefined,
      topLevel: bool(query, "topLevel"),
    }),
    paramVars: ["id", "sort", "topLevel"],
    respond: ({ commentContext: c }) => ({
      comment: restComment(c.comment),
      ancestors: c.ancestors.map(restComment),
      rootCursor: c.rootCursor,
    }),
  }),
  route({
    method: "PATCH",
    path: "/comments/:id",
    identity: "required",
    document: RestEditCommentDocument,
    claimInWrite: true,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) }),
    paramVars: ["id"],
    response: answeredCommentShape("editComment"),
    respond: (d) => restWrittenComment(d.editComment),
  }),
  route({
    method: "DELETE",
    path: "/comments/:id",
    identity: "optional",
    document: RestDeleteCommentDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: () => undefined,
  }),
  // a reader's vote (contract section 18)
  route({
    method: "PUT",
    path: "/comments/:id/vote",
    identity: "required",
    document: RestVoteDocument,
    claimInWrite: true,
    variables: ({ params, body }) => ({ commentId: params.id ?? "", input: bodyObject(body) }),
    paramVars: ["commentId"],
    respond: ({ vote: v }) => ({ value: v.value, score: v.score, upvotes: v.upvotes, downvotes: v.downvotes }),
  }),
  route({
    method: "POST",
    path: "/comments/:id/reactions",
    identity: "required",
    document: RestToggleReactionDocument,
    claimInWrite: true,
    variables: ({ params, body }) => ({ commentId: params.id ?? "", input: bodyObject(body) }),
    paramVars: ["commentId"],
    respond: (d) => d.toggleReaction,
  }),
];
