// Akismet's Verify key (manage_settings): POST /api/v1/settings/safety/akismet/verify, an optional
// body {"apiKey"?, "blog"?, "baseUrl"?} (each left out: the saved one) → 200
// {"valid","error","debugHelp","latencyMs"}.
import { bodyObject, route } from "../../http/rest/router.js";
import { RestVerifyAkismetKeyDocument } from "../../generated/operations.js";

export const akismetRoutes = [
  route({
    method: "POST",
    path: "/settings/safety/akismet/verify",
    document: RestVerifyAkismetKeyDocument,
    variables: ({ body }) => ({ input: bodyObject(body) }),
    respond: (d) => d.verifyAkismetKey,
  }),
];
