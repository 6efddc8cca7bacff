// The moderation hook's Send test (manage_settings): POST /settings/safety/hook/test.
import { route } from "../../http/rest/router.js";
import { RestTestSafetyHookDocument } from "../../generated/operations.js";

export const moderationHookRoutes = [
  route({
    method: "POST",
    path: "/settings/safety/hook/test",
    document: RestTestSafetyHookDocument,
    variables: () => ({}),
    respond: (d) => d.testSafetyHook,
  }),
];
