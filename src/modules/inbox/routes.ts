// The reader's inbox over REST (contract section 19), with their identity and any key:
// GET /api/v1/me/inbox?unread=true&limit=&cursor= → {items, nextCursor, unreadCount}, each item with
// its comment (the REST comment) and, for a reply, `parent`; POST /api/v1/me/inbox/read {"ids"} or
// {"all": true} → {unreadCount}.
import { bodyObject, route } from "../../http/rest/router.js";
import { bool, int, str } from "../../http/rest/params.js";
import { RestMarkInboxReadDocument, RestMyInboxDocument } from "../../generated/operations.js";
import { restComment } from "../comments/routes.js";

export const inboxRoutes = [
  route({
    method: "GET",
    path: "/me/inbox",
    identity: "required",
    document: RestMyInboxDocument,
    variables: ({ query }) => ({ unread: bool(query, "unread"), limit: int(query, "limit"), cursor: str(query, "cursor") }),
    paramVars: ["unread", "limit", "cursor"],
    response: (s) =>
      s.object({
        items: {
          type: "array",
          items: s.object(
            {
              id: s.at("myInbox.items.id"),
              type: s.at("myInbox.items.type"),
              discussionId: s.at("myInbox.items.comment.discussionId"),
              discussionTitle: s.at("myInbox.items.discussionTitle"),
              comment: s.at("myInbox.items.comment"),
              parent: s.at("myInbox.items.parent"),
              createdAt: s.at("myInbox.items.createdAt"),
              readAt: s.at("myInbox.items.readAt"),
            },
            ["parent"],
          ),
        },
        nextCursor: s.at("myInbox.nextCursor"),
        unreadCount: s.at("inboxUnreadCount"),
      }),
    respond: (d) => ({
      items: d.myInbox.items.map(({ comment, parent, ...item }) => ({
        id: item.id,
        type: item.type,
        discussionId: comment.discussionId,
        discussionTitle: item.discussionTitle,
        comment: restComment(comment),
        ...(parent ? { parent: restComment(parent) } : {}),
        createdAt: item.createdAt,
        readAt: item.readAt,
      })),
      nextCursor: d.myInbox.nextCursor,
      unreadCount: d.inboxUnreadCount,
    }),
  }),
  route({
    method: "POST",
    path: "/me/inbox/read",
    identity: "required",
    document: RestMarkInboxReadDocument,
    variables: ({ body }) => ({ input: bodyObject(body, ["ids", "all"]) }),
    status: 200,
    respond: (d) => d.markInboxRead,
  }),
];
