// GET /api/v1/audit (contract section 10): admin JWT or console owner (authScopes on the field).
import { route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import { RestAuditLogDocument } from "../../generated/operations.js";

export const auditRoutes = [
  route({
    method: "GET",
    path: "/audit",
    document: RestAuditLogDocument,
    variables: ({ query }) => ({
      actor: str(query, "actor"),
      action: str(query, "action"),
      limit: int(query, "limit"),
      cursor: str(query, "cursor"),
    }),
    paramVars: ["actor", "action", "limit", "cursor"],
    respond: (d) => d.auditLog,
  }),
];
