// GraphQL for email (contract section 15): the reader's own preferences, `myNotifications` and
// `updateMyNotifications` (X-Service-Identity; any key, publishable included); `sendTestEmail`
// (manage_settings).
import { builder } from "../../graphql/builder.js";
import { ReplyEmailsEnum } from "../settings/graphql.js";
import { getMyNotifications, updateMyNotifications, type NotificationPreferences } from "./preferences.js";
import { sendTestEmail, type TestEmailResult } from "./test-email.js";

const NotificationPreferencesType = builder.objectRef<NotificationPreferences>("NotificationPreferences").implement({
  description: "How the reader of X-Service-Identity hears of replies by email.",
  fields: (t) => ({
    replies: t.expose("replies", { type: ReplyEmailsEnum }),
    chosen: t.exposeBoolean("chosen", { description: "Whether the reader chose it; false: the tenant's email.defaultReplies." }),
  }),
});

const NotificationPreferencesInput = builder.inputType("NotificationPreferencesInput", {
  fields: (t) => ({ replies: t.string({ description: "immediate | daily | off" }) }),
});

builder.queryField("myNotifications", (t) =>
  t.field({
    type: NotificationPreferencesType,
    description: "The email preferences of the reader of X-Service-Identity.",
    authScopes: { browser: true },
    resolve: (_r, _a, ctx) => getMyNotifications(ctx),
  }),
);

builder.mutationField("updateMyNotifications", (t) =>
  t.field({
    type: NotificationPreferencesType,
    description: "The reader of X-Service-Identity chooses how often they hear of replies by email.",
    authScopes: { browser: true },
    args: { input: t.arg({ type: NotificationPreferencesInput, required: true }) },
    resolve: (_r, { input }, ctx) => updateMyNotifications(ctx, input),
  }),
);

const TestEmailResultType = builder.objectRef<TestEmailResult>("TestEmailResult").implement({
  description: "What happened to a test email.",
  fields: (t) => ({
    sent: t.exposeBoolean("sent", { description: "The SMTP server took it." }),
    messageId: t.exposeString("messageId", { nullable: true }),
    error: t.exposeString("error", { nullable: true, description: "Why it was not sent, in words (never credentials)." }),
  }),
});

builder.mutationField("sendTestEmail", (t) =>
  t.field({
    type: TestEmailResultType,
    description:
      "Sends a test email to `to` from the tenant's sender through the service's SMTP server. 409 email_not_configured without one.",
    authScopes: { capability: "manage_settings" },
    args: { to: t.arg.string({ required: true }) },
    resolve: (_r, { to }, ctx) => sendTestEmail(ctx, to),
  }),
);
