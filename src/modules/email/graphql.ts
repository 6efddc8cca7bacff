// GraphQL for email (contract section 15): the reader's own preferences, `myNotifications` and
// `updateMyNotifications` (X-Service-Identity; any key, publishable included); `sendTestEmail`,
// `emailStatus` and `emailMessages` (the console's Outbox) for manage_settings; a signed-in operator's
// own moderation digest (`myModerationDigest`, `updateMyModerationDigest`).
import { builder } from "../../graphql/builder.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import { emailStatus, listEmailMessages, type EmailMessageView, type EmailStatus } from "./messages.js";
import { getMyModerationDigest, updateMyModerationDigest, type ModerationDigestChoice } from "./moderation-digest.js";
import { settingsEnum } from "../../graphql/settings-types.js";
import { getMyNotifications, updateMyNotifications, type NotificationPreferences } from "./preferences.js";
import { sendTestEmail, type TestEmailResult } from "./test-email.js";

const ReplyEmailsEnum = settingsEnum("ReplyEmails");

const NotificationPreferencesType = builder.objectRef<NotificationPreferences>("NotificationPreferences").implement({
  description: "How the reader of X-Service-Identity hears of replies by email.",
  fields: (t) => ({
    replies: t.expose("replies", { type: ReplyEmailsEnum }),
    chosen: t.exposeBoolean("chosen", { description: "Whether the reader chose it; false: the tenant's email.defaultReplies." }),
    subscriptions: t.expose("subscriptions", {
      type: ReplyEmailsEnum,
      description: "Emails of new comments in the discussions the reader follows (`off` unless chosen).",
    }),
  }),
});

const NotificationPreferencesInput = builder.inputType("NotificationPreferencesInput", {
  fields: (t) => ({
    replies: t.string({ description: "immediate | daily | off" }),
    subscriptions: t.string({ description: "immediate | daily | off: emails of new comments in followed discussions" }),
  }),
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
    description:
      "The reader of X-Service-Identity chooses how often they hear by email of replies, and of new comments in the discussions they follow.",
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

const EmailDeliveryEnum = builder.enumType("EmailDelivery", {
  description: "How email leaves the service: `smtp` (SMTP_URL), `outbox` (EMAIL_OUTBOX=1: kept, never sent) or `off`.",
  values: ["smtp", "outbox", "off"] as const,
});

const EmailStatusType = builder.objectRef<EmailStatus>("EmailStatus").implement({
  description: "Whether and how the tenant's email goes out.",
  fields: (t) => ({
    mode: t.expose("mode", { type: EmailDeliveryEnum }),
    from: t.exposeString("from", { description: "The sender: the tenant's email.from, else the service's EMAIL_FROM." }),
  }),
});

builder.queryField("emailStatus", (t) =>
  t.field({
    type: EmailStatusType,
    description: "Whether and how the tenant's email goes out.",
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => emailStatus(ctx),
  }),
);

const EmailMessageType = builder.objectRef<EmailMessageView>("EmailMessage").implement({
  description: "An email rendered for a reader: queued, sent, failed, suppressed, or kept in the outbox (EMAIL_OUTBOX=1).",
  fields: (t) => ({
    id: t.exposeID("id"),
    readerId: t.exposeString("readerId", { nullable: true }),
    kind: t.exposeString("kind", { description: "`replies` (sent within minutes) or `digest` (the daily digest)." }),
    to: t.exposeString("toAddress"),
    subject: t.exposeString("subject"),
    text: t.exposeString("textBody", { description: "The plain-text part." }),
    html: t.exposeString("htmlBody", { description: "The HTML part." }),
    itemCount: t.exposeInt("itemCount", { description: "How many replies it tells of." }),
    state: t.exposeString("state", { description: "queued | sent | failed | suppressed | outbox" }),
    attempts: t.exposeInt("attempts"),
    lastError: t.exposeString("lastError", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    sentAt: t.expose("sentAt", { type: "DateTime", nullable: true }),
  }),
});

const EmailMessageConnection = defineConnection("EmailMessage", EmailMessageType);

builder.queryField("emailMessages", (t) =>
  t.connection(
    {
      type: EmailMessageType,
      description: "The tenant's emails, newest first; `state` narrows them (e.g. `outbox`, the console's Outbox).",
      authScopes: { capability: "manage_settings" },
      args: { state: t.arg.string(), ...legacyPageArgs(t.arg) },
      resolve: (_r, args, ctx) => connectionPage(args, (page) => listEmailMessages(ctx, { state: args.state, ...page })),
    },
    EmailMessageConnection,
  ),
);

const DigestFrequencyEnum = builder.enumType("DigestFrequency", {
  description:
    "How often an operator hears of comments waiting for review: `off`, `hourly`, or `daily` (at the tenant's email.digestHour).",
  values: ["off", "hourly", "daily"] as const,
});

const ModerationDigestType = builder.objectRef<ModerationDigestChoice>("ModerationDigest").implement({
  description: "The signed-in operator's digest of pending and reported comments, sent only when something waits.",
  fields: (t) => ({
    frequency: t.expose("frequency", { type: DigestFrequencyEnum }),
    nextAt: t.expose("nextAt", { type: "DateTime", nullable: true, description: "When the next one is due; null while off." }),
  }),
});

builder.queryField("myModerationDigest", (t) =>
  t.field({
    type: ModerationDigestType,
    description: "The signed-in console operator's moderation digest (403 operator_only for keys and tokens).",
    authScopes: { capability: "moderate_content" },
    resolve: (_r, _a, ctx) => getMyModerationDigest(ctx),
  }),
);

builder.mutationField("updateMyModerationDigest", (t) =>
  t.field({
    type: ModerationDigestType,
    description: "The signed-in console operator opts in to (hourly, daily) or out of (off) a digest of what waits for review.",
    authScopes: { capability: "moderate_content" },
    args: { frequency: t.arg.string({ required: true, description: "off | hourly | daily" }) },
    resolve: (_r, { frequency }, ctx) => updateMyModerationDigest(ctx, frequency),
  }),
);
