// The settings' "Test token" (manage_settings): testIdentityToken (./test-token.ts).
import { builder } from "../../graphql/builder.js";
import { testIdentityToken, type TestedReader, type TokenTestResult } from "./test-token.js";

const TestedReaderType = builder.objectRef<TestedReader>("IdentityTokenReader").implement({
  description: "The reader a token stands for: the id it would post under, and what its claims map to.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "`<iss>#<sub>` for a provider's token, `sub` for the tenant's HS256 assertion." }),
    name: t.exposeString("name"),
    avatarUrl: t.exposeString("avatarUrl", { nullable: true }),
    email: t.exposeString("email", {
      nullable: true,
      description: "The token's email claim (an HS256 assertion's or a provider's), or null.",
    }),
    emailVerified: t.exposeBoolean("emailVerified", {
      description: "Whether reply emails may use the address: a provider's `email_verified`; true for an assertion's address.",
    }),
  }),
});

const TokenHeader = builder.objectRef<NonNullable<TokenTestResult["header"]>>("IdentityTokenHeader").implement({
  fields: (t) => ({
    alg: t.exposeString("alg", { nullable: true }),
    kid: t.exposeString("kid", { nullable: true }),
  }),
});

const TokenTest = builder.objectRef<TokenTestResult>("IdentityTokenTest").implement({
  description: "Whether a reader token would be accepted in X-Service-Identity now, and why not.",
  fields: (t) => ({
    ok: t.exposeBoolean("ok", { description: "The token verifies: a request carrying it acts as `reader`." }),
    reader: t.expose("reader", { type: TestedReaderType, nullable: true }),
    error: t.exposeString("error", { nullable: true, description: "The 401 invalid_identity reason a request would get." }),
    claims: t.expose("claims", { type: "JSON", nullable: true, description: "The decoded payload (not trusted); null when not a JWT." }),
    header: t.expose("header", { type: TokenHeader, nullable: true, description: "The decoded protected header; null when not a JWT." }),
  }),
});

builder.mutationField("testIdentityToken", (t) =>
  t.field({
    type: TokenTest,
    description:
      "Verifies a reader token as a request's X-Service-Identity would be (the tenant's identity providers, or its HS256 secrets) and says whom it stands for or why it is refused. Changes nothing.",
    authScopes: { capability: "manage_settings" },
    args: { token: t.arg.string({ required: true }) },
    resolve: (_r, { token }, ctx) => testIdentityToken(ctx, token),
  }),
);
