// REST routes of readers (contract section 12), moderate_content: GET /readers/:readerId, and
// POST / DELETE /readers/:readerId/ban.
import { bodyObject, route } from "../../http/rest/router.js";
import { RestBanReaderDocument, RestLiftReaderBanDocument, RestReaderDocument } from "../../generated/operations.js";
import { restComment } from "../comments/routes.js";

const byId = (p: Record<string, string>) => ({ id: p.readerId ?? "" });

/** The reader view: its comments as every comment answer is (restComment). */
const restReader = <T extends { recentComments: { moderationReason?: unknown }[] }>(r: T) => ({
  ...r,
  recentComments: r.recentComments.map(restComment),
});

export const readerRoutes = [
  route({
    method: "GET",
    path: "/readers/:readerId",
    document: RestReaderDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: (d) => restReader(d.reader),
  }),
  route({
    method: "POST",
    path: "/readers/:readerId/ban",
    document: RestBanReaderDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) }),
    paramVars: ["id"],
    respond: (d) => restReader(d.banReader),
  }),
  route({
    method: "DELETE",
    path: "/readers/:readerId/ban",
    document: RestLiftReaderBanDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: () => undefined,
  }),
];
