// Chat alerts over GraphQL: the console's Send test (manage_settings), testAlert. The settings'
// `alerts` (AlertSettings, their URLs masked; AlertInput) are made from their description
// (src/tenancy/settings/alerts.ts) with the rest of the settings.
import { builder } from "../../graphql/builder.js";
import { testAlert, type AlertTestResult } from "./test-send.js";

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
