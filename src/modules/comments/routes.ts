// REST routes of comments and reactions (contract section 4); moderation: src/modules/moderation/routes.ts.
import { bodyObject, route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import {
  RestDeleteCommentDocument,
  RestEditCommentDocument,
  RestGetCommentDocument,
  RestListCommentsDocument,
  RestPostCommentDocument,
  RestToggleReactionDocument,
  type CommentListStatus,
  type CommentSort,
} from "../../generated/operations.js";

export const byId = (p: Record<string, string>) => ({ id: p.id ?? "" });

/**
 * The named fields of the JSON body. Other members are ignored; the values go to GraphQL as they
 * are, so a wrong type is reported by input coercion (422 with the field's path) and a missing one
 * by the domain's validation.
 */
function fields<K extends string>(body: unknown, names: readonly K[]): Partial<Record<K, string>> {
  const b = bodyObject(body);
  const out: Partial<Record<K, string>> = {};
  for (const n of names) if (b[n] !== undefined) out[n] = b[n] as string;
  return out;
}

export const commentRoutes = [
  route({
    method: "POST",
    path: "/discussions/:id/comments",
    document: RestPostCommentDocument,
    variables: ({ params, body }) => ({ discussionId: params.id ?? "", input: fields(body, ["body", "parentId"] as const) }),
    paramVars: ["discussionId"],
    respond: (d) => d.postComment,
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
      status: str(query, "status") as CommentListStatus | undefined,
      limit: int(query, "limit"),
      cursor: str(query, "cursor"),
    }),
    paramVars: ["discussionId", "sort", "parentId", "status", "limit", "cursor"],
    respond: (d) => d.comments,
  }),
  route({
    method: "GET",
    path: "/comments/:id",
    document: RestGetCommentDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: (d) => d.comment,
  }),
  route({
    method: "PATCH",
    path: "/comments/:id",
    document: RestEditCommentDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: fields(body, ["body"] as const) }),
    paramVars: ["id"],
    respond: (d) => d.editComment,
  }),
  route({
    method: "DELETE",
    path: "/comments/:id",
    document: RestDeleteCommentDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: () => undefined,
  }),
  route({
    method: "POST",
    path: "/comments/:id/reactions",
    document: RestToggleReactionDocument,
    variables: ({ params, body }) => ({ commentId: params.id ?? "", input: fields(body, ["kind"] as const) }),
    paramVars: ["commentId"],
    respond: (d) => d.toggleReaction,
  }),
];
