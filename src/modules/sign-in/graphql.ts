// GraphQL of the signed-in reader's account (contract section 20): `me`, `updateMe(input: {name})`,
// `signOut` (any key, publishable included; REST GET|PATCH /api/v1/me and POST /api/v1/me/sign-out
// run them).
import { builder } from "../../graphql/builder.js";
import { getMe, signOut, updateMe, type Me } from "./me.js";

const MeType = builder.objectRef<Me>("Me").implement({
  description: "The reader X-Service-Identity stands for, and how they signed in.",
  fields: (t) => ({
    id: t.exposeString("id"),
    name: t.exposeString("name"),
    avatarUrl: t.exposeString("avatarUrl", { nullable: true }),
    method: t.exposeString("method", {
      description: "email | oidc | guest (the service's hosted sign-in), or assertion | provider (the site's own).",
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
