// REST routes of comments and reactions (contract section 4); moderation: src/modules/moderation/routes.ts.
import { bodyObject, route } from "../../http/rest/router.js";
import { bool, int, str } from "../../http/rest/params.js";
import {
  RestCommentContextDocument,
  RestDeleteCommentDocument,
  RestEditCommentDocument,
  RestGetCommentDocument,
  RestListCommentsDocument,
  RestModerationQueueDocument,
  RestPostCommentDocument,
  RestToggleReactionDocument,
  type CommentListStatus,
  type ModerationQueueSort,
  type ModerationQueueStatus,
  type CommentSort,
} from "../../generated/operations.js";

export const byId = (p: Record<string, string>) => ({ id: p.id ?? "" });

/**
 * A comment as REST answers it: `moderationReason` only when there is one and the caller may see it
 * (moderate_content), so for everyone else it is exactly the JSON events carry.
 */
export function restComment<T extends { moderationReason?: unknown }>(c: T): Omit<T, "moderationReason"> | T {
  if (c.moderationReason !== null && c.moderationReason !== undefined) return c;
  const { moderationReason: _, ...rest } = c;
  return rest;
}

const restPage = <T extends { items: { moderationReason?: unknown }[] }>(page: T) => ({ ...page, items: page.items.map(restComment) });

export const commentRoutes = [
  route({
    method: "POST",
    path: "/discussions/:id/comments",
    identity: "required",
    document: RestPostCommentDocument,
    claimInWrite: true,
    variables: ({ params, body }) => ({ discussionId: params.id ?? "", input: bodyObject(body) }),
    paramVars: ["discussionId"],
    respond: (d) => restComment(d.postComment),
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
    respond: (d) => restPage(d.comments),
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
    respond: (d) => restPage(d.moderationQueue),
  }),
  route({
    method: "GET",
    path: "/comments/:id",
    identity: "optional",
    document: RestGetCommentDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: (d) => restComment(d.comment),
  }),
  // a comment's permalink (contract section 18)
  route({
    method: "GET",
    path: "/comments/:id/context",
    identity: "optional",
    document: RestCommentContextDocument,
    variables: ({ params, query }) => ({ ...byId(params), sort: str(query, "sort") as CommentSort | undefined }),
    paramVars: ["id", "sort"],
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
    respond: (d) => restComment(d.editComment),
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
