// Chat alerts over GraphQL: the settings' `alerts` (their URLs masked; src/modules/settings/graphql.ts
// puts them in Settings and SettingsPatch) and the console's Send test (manage_settings): testAlert.
import { builder } from "../../graphql/builder.js";
import { ALERT_KINDS, ALERT_TRIGGERS, type AlertSettings } from "../../tenancy/settings-model.js";
import { alertUrl, maskAlertUrl } from "./settings.js";
import { testAlert, type AlertTestResult } from "./test-send.js";

const AlertKindEnum = builder.enumType("AlertKind", {
  description: "Where a chat alert goes: a Slack or a Discord incoming webhook.",
  values: ALERT_KINDS,
});

const AlertTriggerEnum = builder.enumType("AlertTrigger", {
  description:
    "When an alert is sent: pending (a new comment held, but not by the hook), hook_hold (a new comment the moderation hook held), reported (a comment's open reports reaching safety.reportThreshold).",
  values: ALERT_TRIGGERS,
});

export const AlertSettingsType = builder.objectRef<AlertSettings>("AlertSettings").implement({
  description: "A chat alert (contract section 21; docs/safety.md): its URL is write-only, answered masked.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "Given when the alert is first set; a patch names an alert by it to keep its URL." }),
    kind: t.expose("kind", { type: AlertKindEnum }),
    url: t.string({
      description: "The incoming webhook's scheme and host, the rest masked (`https://hooks.slack.com/…`): the URL is the alert's secret.",
      resolve: (a, _args, ctx) => maskAlertUrl(alertUrl(ctx.app.secretBox, a)),
    }),
    on: t.field({ type: [AlertTriggerEnum], resolve: (a) => a.on }),
  }),
});

export const AlertInput = builder.inputType("AlertInput", {
  fields: (t) => ({
    id: t.string({ description: "An existing alert's id: left out, a new alert." }),
    kind: t.string({ required: true, description: "slack | discord" }),
    url: t.string({
      description:
        "The incoming webhook URL (https), stored encrypted and never answered. Required for a new alert; left out (or as read, masked) the stored one is kept.",
    }),
    on: t.stringList({ required: true, description: "pending | reported | hook_hold (at least one)" }),
  }),
});

const AlertTest = builder.objectRef<AlertTestResult>("AlertTest").implement({
  description: "What the chat answered a sample alert (marked as a test, no links).",
  fields: (t) => ({
    ok: t.exposeBoolean("ok", { description: "The chat accepted it (2xx)." }),
    status: t.exposeInt("status", { nullable: true, description: "The HTTP status of its answer; null when none came." }),
    latencyMs: t.exposeInt("latencyMs"),
    error: t.exposeString("error", {
      nullable: true,
      description: "Why it was not accepted: a timeout, a refused address, the network, or the HTTP status with the start of its answer.",
    }),
  }),
});

builder.mutationField("testAlert", (t) =>
  t.field({
    type: AlertTest,
    description:
      "Sends a sample message to the saved alert at `index` of settings alerts and says what the chat answered. 404 alert_not_configured without one.",
    authScopes: { capability: "manage_settings" },
    args: { index: t.arg.int({ required: true, description: "The alert's place in settings alerts, from 0." }) },
    resolve: (_r, { index }, ctx) => testAlert(ctx, index),
  }),
);
