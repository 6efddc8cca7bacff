// GET /api/v1/comments/recent?limit=&cursor=&discussionIds=a,b → the latest visible comments across the
// tenant, each the REST comment with its discussionTitle and discussionUrl (contract section 19).
import { route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import { RestRecentCommentsDocument } from "../../generated/operations.js";
import { restComment } from "../comments/routes.js";

export const recentRoutes = [
  route({
    method: "GET",
    path: "/comments/recent",
    document: RestRecentCommentsDocument,
    variables: ({ query }) => {
      const ids = str(query, "discussionIds");
      return {
        discussionIds: ids === undefined ? undefined : ids.split(","),
        limit: int(query, "limit"),
        cursor: str(query, "cursor"),
      };
    },
    paramVars: ["discussionIds", "limit", "cursor"],
    response: (s) =>
      s.object({
        items: {
          type: "array",
          items: s.merge(
            s.at("recentComments.items.comment"),
            s.object({
              discussionTitle: s.at("recentComments.items.discussionTitle"),
              discussionUrl: s.at("recentComments.items.discussionUrl"),
            }),
          ),
        },
        nextCursor: s.at("recentComments.nextCursor"),
      }),
    respond: (d) => ({
      items: d.recentComments.items.map((i) => ({
        ...restComment(i.comment),
        discussionTitle: i.discussionTitle,
        discussionUrl: i.discussionUrl,
      })),
      nextCursor: d.recentComments.nextCursor,
    }),
  }),
];
