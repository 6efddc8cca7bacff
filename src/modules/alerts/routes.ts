// A chat alert's Send test (manage_settings): POST /settings/alerts/:index/test.
import { route } from "../../http/rest/router.js";
import { int } from "../../http/rest/params.js";
import { RestTestAlertDocument } from "../../generated/operations.js";

export const alertRoutes = [
  route({
    method: "POST",
    path: "/settings/alerts/:index/test",
    document: RestTestAlertDocument,
    variables: ({ params }) => ({ index: int(params, "index") ?? -1 }),
    paramVars: ["index"],
    respond: (d) => d.testAlert,
  }),
];
