// GraphQL of the signed-in reader's account (contract section 20): `me`, `updateMe(input: {name})`,
// `signOut` (any key, publishable included; REST GET|PATCH /api/v1/me and POST /api/v1/me/sign-out
// run them); their passkeys (section 29): `myPasskeys`, `deleteMyPasskey(id)` (REST GET
// /api/v1/me/passkeys, DELETE /api/v1/me/passkeys/{id}); and the Test button of a sign-in provider,
// `testSignInProvider(id)` (manage_settings).
import { builder } from "../../graphql/builder.js";
import { getMe, myPasskeys, removeMyPasskey, signOut, updateMe, type Me } from "./me.js";
import type { Passkey } from "./engine/passkeys.js";
import type { ProviderCheck } from "./engine/provider-check.js";
import { testSignInProvider, type SignInProviderTest } from "./provider-test.js";

const MeType = builder.objectRef<Me>("Me").implement({
  description: "The reader X-Service-Identity stands for, and how they signed in.",
  fields: (t) => ({
    id: t.exposeString("id"),
    name: t.exposeString("name"),
    avatarUrl: t.exposeString("avatarUrl", { nullable: true }),
    method: t.exposeString("method", {
      description: "email | oidc | guest | passkey (the service's hosted sign-in), or assertion | provider (the site's own).",
    }),
  }),
});

const MePatch = builder.inputType("MePatch", {
  fields: (t) => ({ name: t.string({ description: "1–200 characters: the name the reader's comments show from now on." }) }),
});

builder.queryField("me", (t) =>
  t.field({
    type: MeType,
    description: "The reader of X-Service-Identity (401 invalid_identity without one). Any key, publishable included.",
    authScopes: { browser: true },
    resolve: (_r, _a, ctx) => getMe(ctx),
  }),
);

builder.mutationFields((t) => ({
  updateMe: t.field({
    type: MeType,
    description: "Renames the reader of a hosted sign-in's session (409 not_a_session for the site's own readers).",
    authScopes: { browser: true },
    args: { input: t.arg({ type: MePatch, required: true }) },
    resolve: (_r, { input }, ctx) => updateMe(ctx, input),
  }),
  signOut: t.boolean({
    description:
      "Ends the hosted sign-in's session of X-Service-Identity: refused everywhere from now on (409 not_a_session for the site's own readers).",
    authScopes: { browser: true },
    resolve: async (_r, _a, ctx) => {
      await signOut(ctx);
      return true;
    },
  }),
}));

const PasskeyType = builder.objectRef<Passkey>("Passkey").implement({
  description: "A passkey of the reader (contract section 29): added on the hosted pages, it signs them in from the sign-in page.",
  fields: (t) => ({
    id: t.exposeString("id"),
    label: t.exposeString("label", { description: 'What it is called: the name given when it was added, else "Passkey <date>".' }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true, description: "When it last signed in; null: never." }),
  }),
});

builder.queryField("myPasskeys", (t) =>
  t.field({
    type: [PasskeyType],
    description: "The passkeys of the reader of X-Service-Identity, newest first (401 invalid_identity without one). Any key.",
    authScopes: { browser: true },
    resolve: (_r, _a, ctx) => myPasskeys(ctx),
  }),
);

builder.mutationField("deleteMyPasskey", (t) =>
  t.boolean({
    description: "Removes one of the reader's passkeys: it signs nobody in from now on (404 not_found for an id that is not theirs).",
    authScopes: { browser: true },
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await removeMyPasskey(ctx, id);
      return true;
    },
  }),
);

// The console's Test button of a hosted sign-in's provider (src/modules/sign-in/provider-test.ts).
const ProviderCheckType = builder.objectRef<ProviderCheck>("SignInProviderCheck").implement({
  description: "One check of a sign-in provider's Test.",
  fields: (t) => ({
    endpoint: t.exposeString("endpoint", {
      description:
        "discovery and jwks (OpenID Connect), or authorization, token and userinfo (plain OAuth 2); clientSecret: the stored secret opens with this server's key.",
    }),
    url: t.exposeString("url", { description: "The URL called; empty for clientSecret." }),
    ok: t.exposeBoolean("ok"),
    status: t.exposeInt("status", { nullable: true, description: "The HTTP status answered; null when none came." }),
    error: t.exposeString("error", {
      nullable: true,
      description: "Why the check failed: a refused address, a timeout, the network, an HTTP status, a bad document.",
    }),
  }),
});

const SignInProviderTestType = builder.objectRef<SignInProviderTest>("SignInProviderTest").implement({
  description: "Whether a hosted sign-in's provider answers this server (through the SSRF guard). Nobody signs in.",
  fields: (t) => ({
    ok: t.exposeBoolean("ok", { description: "Every check passed." }),
    checks: t.field({ type: [ProviderCheckType], resolve: (r) => r.checks }),
    redirectUri: t.exposeString("redirectUri", {
      nullable: true,
      description:
        "The redirect URI to register at the provider: <PUBLIC_URL>/auth/v1/{tenantId}/callback/{id}; null while PUBLIC_URL is unset.",
    }),
    latencyMs: t.exposeInt("latencyMs"),
  }),
});

builder.mutationField("testSignInProvider", (t) =>
  t.field({
    type: SignInProviderTestType,
    description:
      "The Test button of a provider of settings signIn.oidc: its discovery document and key set, or its three endpoints, called from this server. 404 not_found for an id the settings do not list.",
    authScopes: { capability: "manage_settings" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_r, { id }, ctx) => testSignInProvider(ctx, id),
  }),
);
