// Akismet's Verify key (manage_settings): verifyAkismetKey (./verify.ts).
import { builder } from "../../graphql/builder.js";
import { verifyAkismetKey, type AkismetKeyVerification } from "./verify.js";

const AkismetKeyInput = builder.inputType("AkismetKeyInput", {
  description: "What to verify; a field left out is the saved settings' (safety.akismet). Nothing is stored.",
  fields: (t) => ({
    apiKey: t.string({
      description: "A key to try before saving it; left out: the saved one, which is only sent to the saved base URL.",
    }),
    blog: t.string({ description: "The site's URL, as Akismet knows it." }),
    baseUrl: t.string({ description: "https://host[:port] of Akismet's API; null: https://rest.akismet.com." }),
  }),
});

const AkismetKeyVerificationType = builder.objectRef<AkismetKeyVerification>("AkismetKeyVerification").implement({
  description: "What Akismet's verify-key answered, asked from this server.",
  fields: (t) => ({
    valid: t.exposeBoolean("valid", { description: 'Akismet answered "valid": the key works for the blog.' }),
    error: t.exposeString("error", {
      nullable: true,
      description:
        "Why Akismet gave no verdict: a timeout, the network, an address the SSRF guard refuses, an HTTP status or another answer. Null when it answered valid or invalid.",
    }),
    debugHelp: t.exposeString("debugHelp", {
      nullable: true,
      description: "With an invalid key: what Akismet found wrong (its X-akismet-debug-help), when it says.",
    }),
    latencyMs: t.exposeInt("latencyMs"),
  }),
});

builder.mutationField("verifyAkismetKey", (t) =>
  t.field({
    type: AkismetKeyVerificationType,
    description:
      "Asks Akismet whether a key is valid for the blog (verify-key, within 5 s): the saved settings, or the fields given. 409 akismet_not_configured with neither a saved key nor an apiKey.",
    authScopes: { capability: "manage_settings" },
    args: { input: t.arg({ type: AkismetKeyInput }) },
    resolve: (_r, { input }, ctx) => verifyAkismetKey(ctx, input),
  }),
);
