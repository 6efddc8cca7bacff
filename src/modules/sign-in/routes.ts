// The signed-in reader's account over REST (contract section 20), any key with X-Service-Identity:
// GET /api/v1/me → {"id","name","avatarUrl","method"}; PATCH /api/v1/me {"name"} → 200 the same;
// POST /api/v1/me/sign-out → 204.
import { bodyObject, route } from "../../http/rest/router.js";
import { RestMeDocument, RestSignOutDocument, RestUpdateMeDocument } from "../../generated/operations.js";

export const meRoutes = [
  route({
    method: "GET",
    path: "/me",
    identity: "required",
    document: RestMeDocument,
    variables: () => ({}),
    respond: (d) => d.me,
  }),
  route({
    method: "PATCH",
    path: "/me",
    identity: "required",
    document: RestUpdateMeDocument,
    variables: ({ body }) => ({ input: bodyObject(body, ["name"]) }),
    respond: (d) => d.updateMe,
  }),
  route({
    method: "POST",
    path: "/me/sign-out",
    identity: "required",
    document: RestSignOutDocument,
    variables: () => ({}),
    // a POST answering no body: its 204 named, so the OpenAPI document lists it (a DELETE's is implied)
    status: 204,
    respond: () => undefined,
  }),
];
