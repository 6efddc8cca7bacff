// Analytics per day or hour (view_analytics); the shape is documented in src/modules/analytics/analytics.ts.
import { builder } from "../../graphql/builder.js";
import { getAnalytics, type AnalyticsMetrics, type AnalyticsReport } from "./analytics.js";

const AnalyticsInterval = builder.enumType("AnalyticsInterval", { values: ["day", "hour"] as const });

const WebhookDeliveryCounts = builder.objectRef<AnalyticsMetrics["webhookDeliveries"]>("WebhookDeliveryCounts").implement({
  fields: (t) => ({ ok: t.exposeInt("ok"), failed: t.exposeInt("failed") }),
});

const AnalyticsMetricsRef = builder.interfaceRef<AnalyticsMetrics>("AnalyticsMetrics").implement({
  fields: (t) => ({
    comments: t.exposeInt("comments", {
      description: "Comments published (at posting, or at first approval under pre-moderation), replies included.",
    }),
    replies: t.exposeInt("replies", { description: "Of which replies." }),
    reactions: t.field({ type: "JSON", description: 'Reactions added on comments, by kind: {"like": 3}.', resolve: (m) => m.reactions }),
    pageReactions: t.field({
      type: "JSON",
      description: 'Page reactions added (on discussions themselves), by kind: {"up": 2}.',
      resolve: (m) => m.pageReactions,
    }),
    activeReaders: t.exposeInt("activeReaders", { description: "Distinct readers who commented, edited or reacted." }),
    moderationActions: t.exposeInt("moderationActions"),
    webhookDeliveries: t.field({ type: WebhookDeliveryCounts, resolve: (m) => m.webhookDeliveries }),
    newFollowers: t.exposeInt("newFollowers", {
      description: "Follows (subscription mode all) chosen in the interval and still in force.",
    }),
  }),
});

const AnalyticsTotals = builder.objectRef<AnalyticsMetrics>("AnalyticsTotals").implement({
  interfaces: [AnalyticsMetricsRef],
});

const AnalyticsBucket = builder.objectRef<AnalyticsReport["buckets"][number]>("AnalyticsBucket").implement({
  interfaces: [AnalyticsMetricsRef],
  fields: (t) => ({ start: t.expose("start", { type: "DateTime" }) }),
});

const Analytics = builder.objectRef<AnalyticsReport>("Analytics").implement({
  fields: (t) => ({
    from: t.expose("from", { type: "DateTime" }),
    to: t.expose("to", { type: "DateTime" }),
    interval: t.expose("interval", { type: AnalyticsInterval }),
    discussionId: t.exposeString("discussionId", { nullable: true }),
    followers: t.exposeInt("followers", { description: "Readers following now (mode all): of the discussion, or of any of the tenant's." }),
    totals: t.field({ type: AnalyticsTotals, resolve: (r) => r.totals }),
    buckets: t.field({ type: [AnalyticsBucket], resolve: (r) => r.buckets }),
  }),
});

builder.queryField("analytics", (t) =>
  t.field({
    type: Analytics,
    authScopes: { capability: "view_analytics" },
    args: {
      from: t.arg.string({ description: "ISO 8601; default: 30 days (day) or 24 hours (hour) before `to`." }),
      to: t.arg.string({ description: "ISO 8601, exclusive; default now." }),
      discussionId: t.arg.string(),
      interval: t.arg({ type: AnalyticsInterval }),
    },
    resolve: (_r, args, ctx) => getAnalytics(ctx, args),
  }),
);
