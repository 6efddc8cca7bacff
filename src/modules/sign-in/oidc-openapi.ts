// The OpenAPI description of the hosted sign-in's OpenID Connect and OAuth 2 routes
// (src/modules/sign-in/oidc-routes.ts), added by src/modules/openapi-document.ts to the document
// generated from the REST table. Both are pages of a popup: every refusal is an HTML problem page.
const html = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" } } } });
const path = (name: string, description: string) => ({ name, in: "path", required: true, schema: { type: "string" }, description });
const query = (name: string, description: string, required = false) => ({
  name,
  in: "query",
  required,
  schema: { type: "string" },
  description,
});
const tenantId = path("tenantId", "The site's tenant id");
const providerId = path("providerId", "The id of a provider of settings signIn.oidc");

export const oidcSignInPaths = {
  "/auth/v1/{tenantId}/oidc/{providerId}": {
    get: {
      operationId: "signInWithProvider",
      summary: "Starts a sign-in at the provider (authorization code with PKCE, state, and a nonce for OpenID Connect)",
      tags: ["sign-in"],
      security: [],
      parameters: [
        tenantId,
        providerId,
        query("origin", "The page that opened the popup: one of the site's allowedOrigins", true),
        query(
          "lang",
          "The language of the callback's pages: en, de, fr, es, pt, it, nl, pl, ja or zh (else the best of Accept-Language, else English)",
        ),
      ],
      responses: {
        "302": {
          description:
            "To the provider's authorization endpoint. Sets the browser's sign-in binding cookie (`__Host-eng_sign_in` over https, `eng_sign_in` over http; HttpOnly, SameSite=Lax): only this browser can finish the sign-in",
          headers: { "Set-Cookie": { schema: { type: "string" }, description: "The browser's sign-in binding (10 minutes)" } },
        },
        "400": html("The origin is not in allowedOrigins"),
        "403": html("Sign-in by oidc is not enabled for the site"),
        "404": html("No such site, or no such provider"),
        "429": html("Too many sign-in requests from this address (Retry-After)"),
        "502": html("The provider's discovery document could not be read"),
      },
    },
  },
  "/auth/v1/{tenantId}/callback/{providerId}": {
    get: {
      operationId: "signInProviderCallback",
      summary: "Where the provider sends the reader back: the code exchanged, a reader session started",
      tags: ["sign-in"],
      security: [],
      parameters: [
        tenantId,
        providerId,
        query("code", "The authorization code"),
        query("state", "The state of the sign-in's start (single use, 10 minutes)"),
        query("error", "The provider's error (access_denied: the reader cancelled)"),
      ],
      responses: {
        "200": html(
          'The finish page, in the language of the start: posts {"type":"engagement:signed-in","token","reader"} to the opener, for the origin of the start',
        ),
        "400": html(
          "A state unknown, expired, used or another provider's (sign_in_state_invalid); a state begun in another browser, or a browser without the start's binding cookie (sign_in_browser_mismatch); a cancelled or refused sign-in",
        ),
        "403": html("Sign-in by oidc is not enabled for the site"),
        "404": html("No such site, or no such provider"),
        "429": html("Too many sign-in requests from this address (Retry-After)"),
        "502": html("The provider could not be reached (down, slow, or an address the SSRF guard refuses)"),
      },
    },
  },
};
