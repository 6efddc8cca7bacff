// REST routes of reader reports (contract section 12): POST /comments/:id/reports (a reader action),
// GET /reports and POST /comments/:id/reports/dismiss (moderate_content).
import { bodyObject, route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import {
  RestDismissReportsDocument,
  RestReportCommentDocument,
  RestReportsDocument,
  type ReportStatus,
} from "../../generated/operations.js";
import { restComment } from "../comments/routes.js";

/** A reported comment as REST answers it: its comment as every comment answer is (restComment). */
const restReported = <T extends { comment: { moderationReason?: unknown } }>(r: T) => ({ ...r, comment: restComment(r.comment) });

export const reportRoutes = [
  route({
    method: "POST",
    path: "/comments/:id/reports",
    identity: "required",
    document: RestReportCommentDocument,
    variables: ({ params, body }) => ({ id: params.id ?? "", input: bodyObject(body) }),
    paramVars: ["id"],
    respond: (d) => d.reportComment.report,
    response: (s) => s.at("reportComment.report"),
    status: (d) => (d.reportComment.created ? 201 : 200),
  }),
  route({
    method: "GET",
    path: "/reports",
    document: RestReportsDocument,
    variables: ({ query }) => ({
      status: str(query, "status") as ReportStatus | undefined,
      limit: int(query, "limit"),
      cursor: str(query, "cursor"),
    }),
    paramVars: ["status", "limit", "cursor"],
    respond: (d) => ({ ...d.reports, items: d.reports.items.map(restReported) }),
  }),
  route({
    method: "POST",
    path: "/comments/:id/reports/dismiss",
    document: RestDismissReportsDocument,
    variables: ({ params }) => ({ commentId: params.id ?? "" }),
    paramVars: ["commentId"],
    respond: (d) => restReported(d.dismissReports),
  }),
];
