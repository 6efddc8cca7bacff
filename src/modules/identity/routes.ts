// The settings' "Test token" (manage_settings): POST /settings/identity/test-token {"token"}.
import { bodyObject, route } from "../../http/rest/router.js";
import { RestTestIdentityTokenDocument, type RestTestIdentityTokenMutation } from "../../generated/operations.js";

type Tested = RestTestIdentityTokenMutation["testIdentityToken"];

/** ok → {ok, reader, claims, header}; refused → {ok, error, claims, header} */
const restTested = ({ ok, reader, error, claims, header }: Tested) => (ok ? { ok, reader, claims, header } : { ok, error, claims, header });

export const identityRoutes = [
  route({
    method: "POST",
    path: "/settings/identity/test-token",
    document: RestTestIdentityTokenDocument,
    variables: ({ body }) => ({ token: bodyObject(body, ["token"]).token as string }),
    body: ["token"],
    respond: (d) => restTested(d.testIdentityToken),
    response: (s) =>
      s.object(
        {
          ok: s.at("testIdentityToken.ok"),
          reader: s.at("testIdentityToken.reader"),
          error: s.at("testIdentityToken.error"),
          claims: s.at("testIdentityToken.claims"),
          header: s.at("testIdentityToken.header"),
        },
        ["reader", "error"],
      ),
  }),
];
