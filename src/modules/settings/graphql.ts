// Tenant settings as typed objects (manage_settings): read, patch, identity-secret rotation; and the few a reader-facing client needs (`readerSettings`, any key).
// The types of the settings and of their PATCH are made from the settings' description
// (src/tenancy/settings/, by src/graphql/settings-types.ts); here are the resolvers of the fields it
// computes, the reader's view, and the queries and mutations.
import { builder } from "../../graphql/builder.js";
import { createSettingsTypes, settingsEnum } from "../../graphql/settings-types.js";
import type { Settings } from "../../tenancy/settings/tree.js";
import { getSettings, rotateIdentitySecret, updateSettings, type RotatedIdentitySecret } from "./settings.js";
import type { ShownHook } from "../moderation-hook/secret.js";
import { maskSmtpUrl, tenantSmtpUrl } from "../email/smtp-url.js";
import { signInPageUrl } from "../sign-in/settings.js";
import { tenantIdOf } from "../../context/request.js";
import { alertUrl, maskAlertUrl } from "../alerts/settings.js";
import type { AlertSettings } from "../../tenancy/settings/alerts.js";

const types = createSettingsTypes({
  "SafetyHookSettings.secret": (hook) => (hook as unknown as ShownHook).secret ?? null,
  "EmailSettings.smtpUrl": (e, ctx) => {
    const url = tenantSmtpUrl(ctx.app.secretBox, { email: e as Settings["email"] });
    return url && maskSmtpUrl(url);
  },
  "AlertSettings.url": (a, ctx) => maskAlertUrl(alertUrl(ctx.app.secretBox, a as AlertSettings)),
  "BlueskySettings.appPasswordSet": (b) => typeof b.appPasswordEnc === "string",
});
const SettingsType = types.Settings;
const SettingsPatch = types.SettingsPatch;
const FormattingSettings = types.object("FormattingSettings");
const VoteModeEnum = settingsEnum("VoteMode");

const IdentitySecretPayload = builder.objectRef<RotatedIdentitySecret>("IdentitySecretPayload").implement({
  fields: (t) => ({
    identitySecret: t.exposeString("identitySecret", { description: "The new secret: shown here once." }),
    kid: t.exposeString("kid", { description: "Its `kid`: put it in the assertion's header to pick this secret during an overlap." }),
    previousSecretExpiresAt: t.expose("previousSecretExpiresAt", {
      type: "DateTime",
      nullable: true,
      description: "Until when the secret before it still verifies (identity.secretOverlapHours); null: it no longer does.",
    }),
  }),
});

const ReaderSettingsType = builder.objectRef<Settings>("ReaderSettings").implement({
  description: "What a reader-facing client (the embed) needs of the tenant's settings; readable with a publishable key.",
  fields: (t) => ({
    reactionKinds: t.exposeStringList("reactionKinds", { description: "The reaction kinds readers may use." }),
    editWindowSeconds: t.exposeInt("editWindowSeconds", { description: "How long after posting a reader may edit (0: no limit)." }),
    maxBodyLength: t.exposeInt("maxBodyLength", { description: "The longest comment body, in characters." }),
    formatting: t.expose("formatting", {
      type: FormattingSettings,
      description: "Whether bodies are Markdown (a client shows its Write/Preview tabs and formatting help) and may show images.",
    }),
    pageReactionKinds: t.exposeStringList("pageReactionKinds", {
      description: "The reaction kinds readers may leave on the discussion itself; empty: page reactions are off.",
    }),
    votes: t.expose("votes", { type: VoteModeEnum, description: "What readers may vote on comments: off, up, or updown." }),
    signInMethods: t.stringList({
      description: "The hosted sign-in's methods (email | oidc | guest | passkey); empty: the page must give the reader's identity itself.",
      resolve: (s) => s.signIn.methods,
    }),
    signInUrl: t.string({
      nullable: true,
      description:
        "The hosted sign-in page a client opens in a popup (add ?origin=<page origin>&lang=<language>): `<PUBLIC_URL>/auth/v1/{tenantId}/sign-in`, or that path alone (after the service's address the client uses) when PUBLIC_URL is unset; null while signInMethods is empty.",
      resolve: (s, _a, ctx) => (s.signIn.methods.length ? signInPageUrl(ctx.app.config.PUBLIC_URL, tenantIdOf(ctx)) : null),
    }),
  }),
});

builder.queryField("readerSettings", (t) =>
  t.field({
    type: ReaderSettingsType,
    description: "The reaction kinds, edit window and body limit a reader-facing client shows (any key, publishable included).",
    authScopes: { browser: true },
    resolve: (_r, _a, ctx) => getSettings(ctx),
  }),
);

builder.queryField("settings", (t) =>
  t.field({
    type: SettingsType,
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => getSettings(ctx),
  }),
);

builder.mutationFields((t) => ({
  updateSettings: t.field({
    type: SettingsType,
    authScopes: { capability: "manage_settings" },
    args: { input: t.arg({ type: SettingsPatch, required: true }) },
    resolve: (_r, { input }, ctx) => updateSettings(ctx, input),
  }),
  rotateIdentitySecret: t.field({
    type: IdentitySecretPayload,
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => rotateIdentitySecret(ctx),
  }),
}));
