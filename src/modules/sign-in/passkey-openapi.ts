// The OpenAPI description of readers' passkey routes on the hosted sign-in (contract section 29;
// src/modules/sign-in/passkey-routes.ts), added by src/modules/openapi-document.ts to the document
// generated from the REST table. The JSON routes answer problem documents; the page answers pages.
const tenantId = { name: "tenantId", in: "path", required: true, schema: { type: "string" }, description: "The site's tenant id" };
const identity = {
  name: "X-Service-Identity",
  in: "header",
  required: true,
  schema: { type: "string" },
  description: "The reader: a session of the hosted sign-in (rs_…), the site's assertion or a provider's token",
};
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { type: "object" } } } });
const html = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" } } } });
const json = (description: string) => ({ description, content: { "application/json": { schema: { type: "object" } } } });
const credentialBody = (extra: Record<string, unknown> = {}) => ({
  required: true,
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["credential"],
        properties: {
          credential: {
            type: "object",
            description: "The credential the browser made, as @simplewebauthn/browser answers it (its JSON form)",
          },
          ...extra,
        },
      },
    },
  },
});
const common = {
  "403": problem("sign_in_method_disabled: signIn.methods does not list passkey"),
  "404": problem("No such site"),
  "409": problem("passkeys_unavailable: production without PUBLIC_URL (the relying party is its host)"),
  "429": problem("Too many sign-in requests from this address (Retry-After)"),
};

export const passkeyPaths = {
  "/auth/v1/{tenantId}/passkeys/options": {
    post: {
      operationId: "passkeyRegistrationOptions",
      summary: "Options to add a passkey for the reader (WebAuthn registration: a discoverable credential, user verification preferred)",
      tags: ["sign-in"],
      security: [],
      parameters: [tenantId, identity],
      responses: {
        "200": json("PublicKeyCredentialCreationOptionsJSON; its challenge is good once, for 5 minutes, for this reader"),
        "401": problem("invalid_identity: no reader, or one the site does not vouch for"),
        ...common,
      },
    },
  },
  "/auth/v1/{tenantId}/passkeys": {
    post: {
      operationId: "addPasskey",
      summary: "Adds the passkey the browser made with those options",
      tags: ["sign-in"],
      security: [],
      parameters: [tenantId, identity],
      requestBody: credentialBody({ label: { type: "string", description: '1–60 characters; default "Passkey <date>"' } }),
      responses: {
        "201": json('The passkey: {"id","label","createdAt","lastUsedAt"}'),
        "400": problem(
          "passkey_invalid: a challenge unknown, spent, expired or another reader's; a credential that does not verify or is registered already",
        ),
        "401": problem("invalid_identity"),
        "422": problem("validation_failed: no credential, or a label that is not 1–60 characters"),
        ...common,
      },
    },
  },
  "/auth/v1/{tenantId}/passkeys/authentication-options": {
    post: {
      operationId: "passkeyAuthenticationOptions",
      summary: "Options to sign in with any passkey of the site (a discoverable credential: the browser offers them, by autofill too)",
      tags: ["sign-in"],
      security: [],
      parameters: [tenantId],
      responses: { "200": json("PublicKeyCredentialRequestOptionsJSON; its challenge is good once, for 5 minutes"), ...common },
    },
  },
  "/auth/v1/{tenantId}/passkeys/authenticate": {
    post: {
      operationId: "signInWithPasskey",
      summary: "Signs in with a passkey: a reader session, as the other hosted methods start",
      tags: ["sign-in"],
      security: [],
      parameters: [tenantId],
      requestBody: credentialBody(),
      responses: {
        "200": json('{"token","reader":{"id","name","avatarUrl"}}: the session (rs_…) of the passkey\'s reader'),
        "401": problem(
          "passkey_refused: a challenge unknown, spent or expired; a credential no passkey of this site has (another site's included); a bad signature; a signature counter that went backwards (a cloned authenticator)",
        ),
        "422": problem("validation_failed: no credential, or one larger than 16 KB"),
        ...common,
      },
    },
  },
  "/auth/v1/{tenantId}/passkeys/new": {
    get: {
      operationId: "addPasskeyPage",
      summary: "The page that adds a passkey, opened in a popup by a page of the site (or by a finished sign-in, offer=1)",
      tags: ["sign-in"],
      security: [],
      parameters: [
        tenantId,
        {
          name: "origin",
          in: "query",
          required: true,
          schema: { type: "string" },
          description: "The page that opened the popup: one of the site's allowedOrigins",
        },
        {
          name: "lang",
          in: "query",
          schema: { type: "string" },
          description: "The page's language: en, de, fr, es, pt, it, nl, pl, ja or zh",
        },
        {
          name: "offer",
          in: "query",
          schema: { type: "string" },
          description: "1: opened by a finished sign-in, whose session it takes from its own tab",
        },
      ],
      // a page of a popup: every refusal is an HTML problem page
      responses: {
        "200": html("The page"),
        "400": html("The origin is not in allowedOrigins"),
        "403": html("Sign-in by passkey is not enabled for the site"),
        "404": html("No such site"),
        "409": html("No passkeys on this instance: production without PUBLIC_URL"),
        "429": html("Too many sign-in requests from this address (Retry-After)"),
      },
    },
  },
};
