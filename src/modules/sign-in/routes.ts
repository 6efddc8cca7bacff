// The signed-in reader's account over REST (contract section 20), any key with X-Service-Identity:
// GET /api/v1/me → {"id","name","avatarUrl","method"}; PATCH /api/v1/me {"name"} → 200 the same;
// POST /api/v1/me/sign-out → 204; the reader's passkeys (contract section 29): GET /api/v1/me/passkeys
// → {"items":[{"id","label","createdAt","lastUsedAt"}],"nextCursor":null} (all of them: a reader has
// few), DELETE /api/v1/me/passkeys/{id} → 204.
import { bodyObject, route } from "../../http/rest/router.js";
import {
  RestDeleteMyPasskeyDocument,
  RestMeDocument,
  RestMyPasskeysDocument,
  RestSignOutDocument,
  RestTestSignInProviderDocument,
  RestUpdateMeDocument,
} from "../../generated/operations.js";

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
  route({
    method: "GET",
    path: "/me/passkeys",
    identity: "required",
    document: RestMyPasskeysDocument,
    variables: () => ({}),
    response: (s) => s.object({ items: s.at("myPasskeys"), nextCursor: { type: "null" } }),
    respond: (d) => ({ items: d.myPasskeys, nextCursor: null }),
  }),
  route({
    method: "DELETE",
    path: "/me/passkeys/:id",
    identity: "required",
    document: RestDeleteMyPasskeyDocument,
    paramVars: ["id"],
    variables: ({ params }) => ({ id: params.id ?? "" }),
    respond: () => undefined,
  }),
];

// The Test button of a hosted sign-in's provider (manage_settings): POST
// /api/v1/settings/sign-in/providers/{id}/test → 200 {"ok","checks":[{"endpoint","url","ok","status","error"}],"redirectUri","latencyMs"}.
export const signInProviderRoutes = [
  route({
    method: "POST",
    path: "/settings/sign-in/providers/:id/test",
    document: RestTestSignInProviderDocument,
    paramVars: ["id"],
    variables: ({ params }) => ({ id: params.id ?? "" }),
    respond: (d) => d.testSignInProvider,
  }),
];
