// GET /analytics (view_analytics): per-interval counts; response shape in src/modules/analytics/analytics.ts.
import { route } from "../../http/rest/router.js";
import { str } from "../../http/rest/params.js";
import { RestGetAnalyticsDocument, type AnalyticsInterval } from "../../generated/operations.js";

export const analyticsRoutes = [
  route({
    method: "GET",
    path: "/analytics",
    document: RestGetAnalyticsDocument,
    variables: ({ query }) => ({
      from: str(query, "from"),
      to: str(query, "to"),
      discussionId: str(query, "discussionId"),
      interval: str(query, "interval") as AnalyticsInterval | undefined,
    }),
    paramVars: ["from", "to", "discussionId", "interval"],
    respond: (d) => d.analytics,
  }),
];
