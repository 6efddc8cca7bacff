// REST routes of readers (contract section 12), moderate_content: GET /readers/:readerId, PATCH
// /readers/:readerId (its badge, contract section 21), PUT /readers/:readerId/trust (contract section
// 21), and POST / DELETE /readers/:readerId/ban; privacy (contract section 13, docs/privacy.md): GET
// /readers/:readerId/export and DELETE /readers/:readerId (manage_readers), GET /me/export and
// DELETE /me (the reader of X-Service-Identity).
import { bodyObject, route } from "../../http/rest/router.js";
import {
  RestBanReaderDocument,
  RestEraseMeDocument,
  RestEraseReaderDocument,
  RestLiftReaderBanDocument,
  RestMyExportDocument,
  RestReaderDocument,
  RestReaderExportDocument,
  RestSetReaderTrustDocument,
  RestUpdateReaderDocument,
} from "../../generated/operations.js";
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
    method: "PATCH",
    path: "/readers/:readerId",
    document: RestUpdateReaderDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) }),
    paramVars: ["id"],
    respond: (d) => restReader(d.updateReader),
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
    method: "PUT",
    path: "/readers/:readerId/trust",
    document: RestSetReaderTrustDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) as { level: "trusted" | "default" | "premoderated" } }),
    paramVars: ["id"],
    respond: (d) => restReader(d.setReaderTrust),
  }),
  route({
    method: "DELETE",
    path: "/readers/:readerId/ban",
    document: RestLiftReaderBanDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: () => undefined,
  }),
  route({
    method: "GET",
    path: "/readers/:readerId/export",
    document: RestReaderExportDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: (d) => d.readerExport,
  }),
  route({
    method: "DELETE",
    path: "/readers/:readerId",
    document: RestEraseReaderDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["id"],
    respond: () => undefined,
  }),
  route({
    method: "GET",
    path: "/me/export",
    identity: "required",
    document: RestMyExportDocument,
    variables: () => ({}),
    respond: (d) => d.myExport,
  }),
  route({
    method: "DELETE",
    path: "/me",
    identity: "required",
    document: RestEraseMeDocument,
    variables: () => ({}),
    respond: () => undefined,
  }),
];
